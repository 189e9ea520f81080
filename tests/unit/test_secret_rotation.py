"""The rotation of the service role's password (gligabao.aws.rotation): Secrets Manager (moto)
drives the four steps; the database is a fake that keeps each role's password."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from rotation_support import (
    APP_ROLE,
    app_secret,
    current_password,
    rotate_secret,
    rotation_function,
    stages,
    started_rotation,
)

from gligabao.aws.rotation import (
    PASSWORD_ALPHABET,
    PASSWORD_LENGTH,
    RotationFailed,
    RotationRefused,
    rotate,
    serve_rotation,
)

FIRST_PASSWORD = "first-Pa55word-of-gligabao-app"


class FakeRolePasswords:
    """The database's side: each role's password; a login with another one fails."""

    def __init__(self, passwords: dict[str, str]):
        self.passwords = dict(passwords)
        self.calls: list[str] = []

    def set_password(self, role: str, password: str) -> None:
        self.calls.append("set_password")
        self.passwords[role] = password

    def check_login(self, role: str, password: str) -> None:
        self.calls.append("check_login")
        if self.passwords.get(role) != password:
            raise PermissionError(f'password authentication failed for user "{role}"')


@pytest.fixture
def secrets(aws_env):
    with mock_aws():
        yield boto3.client("secretsmanager", region_name="us-east-1")


@pytest.fixture
def arn(secrets) -> str:
    return app_secret(secrets, FIRST_PASSWORD)


@pytest.fixture
def database() -> FakeRolePasswords:
    return FakeRolePasswords({APP_ROLE: FIRST_PASSWORD})


def _step(secrets, arn, database, token: str, step: str) -> str:
    event = {"Step": step, "SecretId": arn, "ClientRequestToken": token}
    return rotate(event, secrets, database, secret_arn=arn, role=APP_ROLE)


def test_rotate_secret_gives_the_role_a_new_password_in_the_database_and_the_secret(
    secrets, arn, database, monkeypatch
):
    steps = []

    def function(event):
        steps.append(event["Step"])
        rotate(event, secrets, database, secret_arn=arn, role=APP_ROLE)

    rotate_secret(secrets, arn, rotation_function(monkeypatch, function))

    assert steps == ["createSecret", "setSecret", "testSecret", "finishSecret"]
    new = current_password(secrets, arn)
    assert new != FIRST_PASSWORD
    assert len(new) == PASSWORD_LENGTH and set(new) <= set(PASSWORD_ALPHABET)
    assert database.passwords[APP_ROLE] == new
    value = json.loads(secrets.get_secret_value(SecretId=arn, VersionStage="AWSCURRENT")["SecretString"])
    assert value == {"username": APP_ROLE, "password": new}  # the other fields kept


def test_the_schedule_s_first_check_at_deploy_only_tests_the_current_password(
    secrets, arn, database, monkeypatch
):
    """DatabaseAppSecretRotation (RotateImmediatelyOnUpdate false): Secrets Manager then runs
    testSecret alone, on a pending copy of the current value; the deploy waits on it."""
    steps = []

    def function(event):
        steps.append(event["Step"])
        rotate(event, secrets, database, secret_arn=arn, role=APP_ROLE)

    secrets.rotate_secret(
        SecretId=arn,
        RotationLambdaARN=rotation_function(monkeypatch, function),
        RotationRules={"AutomaticallyAfterDays": 30},
        RotateImmediately=False,
    )

    assert steps == ["testSecret"]
    assert database.calls == ["check_login"]
    assert current_password(secrets, arn) == FIRST_PASSWORD == database.passwords[APP_ROLE]


def test_a_step_repeated_finds_its_work_done(secrets, arn, database, monkeypatch):
    token = started_rotation(secrets, arn, monkeypatch)
    _step(secrets, arn, database, token, "createSecret")
    pending = secrets.get_secret_value(SecretId=arn, VersionId=token)["SecretString"]

    assert _step(secrets, arn, database, token, "createSecret").endswith("has its password already")
    assert secrets.get_secret_value(SecretId=arn, VersionId=token)["SecretString"] == pending
    for step in ("setSecret", "testSecret", "setSecret", "testSecret", "finishSecret"):
        _step(secrets, arn, database, token, step)
    assert _step(secrets, arn, database, token, "finishSecret").endswith("already current, nothing to do")
    assert current_password(secrets, arn) == database.passwords[APP_ROLE]


@pytest.mark.parametrize("step", ["setSecret", "testSecret", "finishSecret"])
def test_a_step_before_create_secret_is_refused_and_nothing_changes(
    secrets, arn, database, monkeypatch, step
):
    token = started_rotation(secrets, arn, monkeypatch)
    before = stages(secrets, arn)

    with pytest.raises(RotationRefused, match=f"{step} before createSecret"):
        _step(secrets, arn, database, token, step)

    assert stages(secrets, arn) == before
    assert database.passwords[APP_ROLE] == FIRST_PASSWORD
    assert current_password(secrets, arn) == FIRST_PASSWORD


@pytest.mark.parametrize("step", ["testSecret", "finishSecret"])
def test_testing_or_finishing_before_set_secret_fails_and_the_current_password_stays(
    secrets, arn, database, monkeypatch, step
):
    token = started_rotation(secrets, arn, monkeypatch)
    _step(secrets, arn, database, token, "createSecret")

    with pytest.raises(PermissionError, match="password authentication failed"):
        _step(secrets, arn, database, token, step)

    assert current_password(secrets, arn) == FIRST_PASSWORD == database.passwords[APP_ROLE]
    assert "set_password" not in database.calls


def test_a_version_outside_a_rotation_is_refused(secrets, arn, database, monkeypatch):
    started_rotation(secrets, arn, monkeypatch)

    with pytest.raises(RotationRefused, match="is not part of a rotation"):
        _step(secrets, arn, database, "a-token-secrets-manager-never-made", "setSecret")


def test_a_secret_without_rotation_is_refused(secrets, arn, database):
    with pytest.raises(RotationRefused, match="rotation is not enabled on the secret"):
        _step(secrets, arn, database, "any-token", "createSecret")


def test_only_the_service_role_s_secret_is_rotated(secrets, arn, database, monkeypatch):
    master = secrets.create_secret(
        Name="gligabao/database", SecretString=json.dumps({"username": "gligabao_admin", "password": "m"})
    )["ARN"]
    token = started_rotation(secrets, master, monkeypatch)
    event = {"Step": "createSecret", "SecretId": master, "ClientRequestToken": token}

    with pytest.raises(RotationRefused, match="rotates only the service role's secret"):
        rotate(event, secrets, database, secret_arn=arn, role=APP_ROLE)


def test_a_secret_of_another_user_is_refused(secrets, database, monkeypatch):
    other = secrets.create_secret(
        Name="gligabao/other", SecretString=json.dumps({"username": "gligabao_admin", "password": "m"})
    )["ARN"]
    token = started_rotation(secrets, other, monkeypatch)

    with pytest.raises(RotationRefused, match="username is not gligabao_app"):
        _step(secrets, other, database, token, "createSecret")


def test_a_failed_step_is_raised_with_its_reason_and_no_password():
    password = "s3cr3t-Pa55word-never-shown"

    def step(event):
        raise RuntimeError(f"cannot connect: host=db user=gligabao_app password={password} dbname=x")

    with pytest.raises(RotationFailed) as failure:
        serve_rotation({"Step": "testSecret"}, step=step, passwords=lambda: [password])

    assert password not in str(failure.value)
    assert str(failure.value).startswith("RuntimeError: cannot connect")
    assert failure.value.__cause__ is None and failure.value.__suppress_context__


def test_the_test_login_goes_to_the_cluster_itself_not_the_proxy_and_only_by_scram(secrets):
    from conftest import reconfigure
    from psycopg.conninfo import conninfo_to_dict

    from gligabao import bootstrap

    master = secrets.create_secret(
        Name="gligabao/database",
        SecretString=json.dumps(
            {"username": "gligabao_admin", "password": "m", "host": "cluster.example", "port": 5432}
        ),
    )["ARN"]
    settings = reconfigure(database_url=None, db_secret_arn=master, db_host="proxy.example").settings

    url = conninfo_to_dict(bootstrap.role_login_url(settings, APP_ROLE, "new-Pa55word"))

    assert url["host"] == "cluster.example"  # the proxy would accept only the current password
    assert (url["user"], url["password"]) == (APP_ROLE, "new-Pa55word")
    assert (url["sslmode"], url["require_auth"]) == ("verify-full", "scram-sha-256")
    assert Path(url["sslrootcert"]).read_text().count("BEGIN CERTIFICATE") > 20  # RDS's authorities
