"""Run by the SAM CLI's own Python (.venv-tools), not by pytest: transforms a template with SAM's
translator (the AWS::Serverless transform CloudFormation runs on a deploy) once per set of
parameter values, and prints, as JSON, a list of the transformed templates' resources.

    .venv-tools/bin/python tests/sam_translate.py template.yaml < parameter-sets.json

Each set is {"parameters": {...}, "artifacts": {...}}: the parameter values CloudFormation hands
the transform (every parameter, defaults filled in), and the S3 key of each function's or
layer's packaged code by logical id, as `sam package` writes it (CodeUri, ContentUri); a
resource not named gets `<logical id>.zip`."""

import copy
import json
import os
import sys

from samcli.yamlhelper import yaml_parse
from samtranslator.translator.transform import transform

PACKAGED_BUCKET = "gligabao-artifacts"


class _NoManagedPolicies:
    """The template names no AWS managed policy: nothing to look up in IAM."""

    def load(self) -> dict:
        return {}


def _packaged(template: dict, artifacts: dict[str, str]) -> dict:
    template = copy.deepcopy(template)
    for name, resource in template["Resources"].items():
        props = resource.get("Properties") or {}
        key = artifacts.get(name, f"{name}.zip")
        if resource["Type"] == "AWS::Serverless::Function" and "CodeUri" in props:
            props["CodeUri"] = f"s3://{PACKAGED_BUCKET}/{key}"
        if resource["Type"] == "AWS::Serverless::LayerVersion":
            props["ContentUri"] = f"s3://{PACKAGED_BUCKET}/{key}"
    return template


def main(path: str) -> None:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with open(path, encoding="utf-8") as stream:
        template = yaml_parse(stream.read())
    sets = json.load(sys.stdin)
    results = []
    for each in sets:
        # The transform sees the values CloudFormation would pass it, pseudo parameters included.
        parameters = {
            "AWS::Region": "us-east-1",
            "AWS::AccountId": "123456789012",
            "AWS::Partition": "aws",
            "AWS::StackName": "gligabao",
            "AWS::StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/gligabao/0c0b0a90",
            "AWS::URLSuffix": "amazonaws.com",
            **each["parameters"],
        }
        output = transform(_packaged(template, each.get("artifacts", {})), parameters, _NoManagedPolicies())
        results.append(output["Resources"])
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
