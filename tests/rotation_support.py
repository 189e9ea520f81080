"""Secrets Manager (moto) with a rotation function of ours: `rotate-secret` invokes it for each
of the four steps, in order, as Secrets Manager does. moto would run a Lambda function in a
container; here its invoke calls the function's handler in this process."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable

import boto3

APP_ROLE = "gligabao_app"


class StopRotation(Exception):
    """Raised by a test's rotation function to leave a rotation half done, as a failed step does."""


def app_secret(client, password: str = "first-Pa55word-of-gligabao-app") -> str:
    return client.create_secret(
        Name="gligabao/database-app", SecretString=json.dumps({"username": APP_ROLE, "password": password})
    )["ARN"]


def rotation_function(monkeypatch, handle: Callable[[dict], object]) -> str:
    """A Lambda function (moto) whose invocations are `handle(event)`; returns its ARN."""
    from moto.awslambda.models import LambdaBackend

    def invoke(self, function_name, qualifier, body, headers, response_headers):
        handle(json.loads(body))
        return b""

    monkeypatch.setattr(LambdaBackend, "invoke", invoke)
    role = boto3.client("iam", region_name="us-east-1").create_role(
        RoleName="gligabao-migrate",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", "")
    return boto3.client("lambda", region_name="us-east-1").create_function(
        FunctionName="gligabao-migrate",
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": code.getvalue()},
    )["FunctionArn"]


def rotate_secret(client, arn: str, function_arn: str) -> None:
    """`aws secretsmanager rotate-secret --secret-id ARN`, its schedule the template's (30 days)."""
    client.rotate_secret(
        SecretId=arn, RotationLambdaARN=function_arn, RotationRules={"AutomaticallyAfterDays": 30}
    )


def started_rotation(client, arn: str, monkeypatch) -> str:
    """A rotation Secrets Manager has started and whose createSecret failed: a version labelled
    AWSPENDING with no value yet. Returns its token."""
    tokens = []

    def stop_at_create(event):
        tokens.append(event["ClientRequestToken"])
        raise StopRotation

    try:
        rotate_secret(client, arn, rotation_function(monkeypatch, stop_at_create))
    except StopRotation:
        pass
    return tokens[0]


def stages(client, arn: str) -> dict[str, list[str]]:
    return client.describe_secret(SecretId=arn)["VersionIdsToStages"]


def current_password(client, arn: str) -> str:
    value = client.get_secret_value(SecretId=arn, VersionStage="AWSCURRENT")["SecretString"]
    return json.loads(value)["password"]
