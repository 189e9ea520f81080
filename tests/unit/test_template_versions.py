"""A deploy that changes only parameters reaches every function: SAM's translator (the transform
CloudFormation runs) publishes a new version, so the `live` alias the API calls moves to it.

SAM names a function's version after a hash of its properties as written, `{"Ref": "AuthMode"}`
and not the value (aws/serverless-application-model#3820): without the template's fingerprint a
deploy from AuthMode iam to jwt published nothing and the API kept calling a version that runs
with GB_AUTH_MODE=iam. The parameters checked are read off the template, so a new one cannot be
forgotten.

SAM runs in its own virtualenv (.venv-tools, `make tools`), hence a subprocess of its Python."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import ROOT
from test_sam_local_env import _tools_python

from gligabao.local.template_routes import load_template

TEMPLATE = load_template(ROOT / "template.yaml")
# The fingerprint itself (Globals' Tracing) and the event sources (the API's routes, the queue's
# mapping: not part of a version) are not read for the parameters a function's version depends on.
NOT_VERSIONED = {"Tracing", "Events"}


def _function_properties(name: str) -> dict:
    defaults = TEMPLATE["Globals"]["Function"]
    own = TEMPLATE["Resources"][name]["Properties"]
    merged = {**defaults, **own}
    merged["Environment"] = {
        "Variables": {
            **defaults.get("Environment", {}).get("Variables", {}),
            **own.get("Environment", {}).get("Variables", {}),
        }
    }
    return {key: value for key, value in merged.items() if key not in NOT_VERSIONED}


def _parameters_in(value) -> set[str]:
    """The parameters a value reads: Ref, ${...} of Fn::Sub, and the conditions of Fn::If."""
    parameters = TEMPLATE["Parameters"]
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "Ref" and item in parameters:
                found.add(item)
            elif key == "Fn::Sub":
                text = item if isinstance(item, str) else item[0]
                found |= {name for name in re.findall(r"\$\{([A-Za-z0-9]+)\}", text) if name in parameters}
            elif key == "Fn::If":
                found |= _parameters_in(TEMPLATE["Conditions"][item[0]])
            elif key == "Condition" and isinstance(item, str):
                found |= _parameters_in(TEMPLATE["Conditions"][item])
            found |= _parameters_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _parameters_in(item)
    return found


VERSIONED = sorted(
    name
    for name, resource in TEMPLATE["Resources"].items()
    if resource["Type"] == "AWS::Serverless::Function" and "AutoPublishAlias" in resource["Properties"]
)
READERS = {
    parameter: {name for name in VERSIONED if parameter in _parameters_in(_function_properties(name))}
    for parameter in TEMPLATE["Parameters"]
}
READ = sorted(parameter for parameter, readers in READERS.items() if readers)


def _default(parameter: str):
    spec = TEMPLATE["Parameters"][parameter]
    value = spec.get("Default", "")
    if spec["Type"] == "CommaDelimitedList":
        return [item.strip() for item in str(value).split(",")]
    return str(value)


def _other(parameter: str):
    """A second valid value of the parameter."""
    spec = TEMPLATE["Parameters"][parameter]
    default = _default(parameter)
    if "AllowedValues" in spec:
        return next(str(v) for v in spec["AllowedValues"] if str(v) != default)
    if spec["Type"] == "Number":
        step = 1 if float(default) + 1 <= spec.get("MaxValue", float("inf")) else -1
        return str(float(default) + step).removesuffix(".0")
    if spec["Type"] == "CommaDelimitedList":
        return ["subnet-0a1b2c3d4e5f60718", "subnet-0b1c2d3e4f5a60719"]
    value = f"{default}2" if default else "other"
    assert re.fullmatch(spec.get("AllowedPattern", ".*"), value), parameter
    return value


DEFAULTS = {parameter: _default(parameter) for parameter in TEMPLATE["Parameters"]}


@pytest.fixture(scope="module")
def translated() -> list[dict]:
    """The transformed resources: the defaults, each read parameter changed alone, a new build of
    the layer, a new build of the query function's code, the defaults again."""
    tools_python = _tools_python()
    if tools_python is None:
        pytest.skip("the SAM CLI's virtualenv is missing: `make tools` installs it (`make test` does)")
    sets = [{"parameters": DEFAULTS}]
    sets += [{"parameters": {**DEFAULTS, parameter: _other(parameter)}} for parameter in READ]
    sets += [{"parameters": DEFAULTS, "artifacts": {"CoreLayer": "CoreLayer-rebuilt.zip"}}]
    sets += [{"parameters": DEFAULTS, "artifacts": {"QueryFunction": "QueryFunction-rebuilt.zip"}}]
    sets += [{"parameters": dict(DEFAULTS)}]
    result = subprocess.run(
        [str(tools_python), str(ROOT / "tests/sam_translate.py"), str(ROOT / "template.yaml")],
        input=json.dumps(sets),
        env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _versions(resources: dict) -> dict[str, str]:
    """Function -> the logical id of the version its `live` alias points at."""
    versions = {}
    for resource in resources.values():
        if resource["Type"] == "AWS::Lambda::Alias":
            props = resource["Properties"]
            versions[props["FunctionName"]["Ref"]] = props["FunctionVersion"]["Fn::GetAtt"][0]
    return versions


def _changed(before: dict, after: dict) -> set[str]:
    old, new = _versions(before), _versions(after)
    assert set(old) == set(new) == set(VERSIONED)
    return {function for function in VERSIONED if old[function] != new[function]}


def test_the_parameters_a_version_depends_on_are_found_in_the_template():
    assert {"AuthMode", "LlmProvider", "LlmModel", "Geo", "EmbeddingModel", "Profile"} <= set(READ)
    assert not READERS["JwtIssuer"]  # the API's authorizer reads it, no function does
    assert not READERS["DatabaseMaxCapacity"]


@pytest.mark.parametrize("parameter", READ)
def test_a_parameter_only_deploy_publishes_a_new_version_of_every_function_that_reads_it(
    translated, parameter
):
    changed = _changed(translated[0], translated[1 + READ.index(parameter)])
    assert changed == READERS[parameter], f"{parameter}: {len(changed)} of {len(READERS[parameter])}"


def test_the_same_parameters_publish_the_same_versions(translated):
    assert _changed(translated[0], translated[len(READ) + 3]) == set()


def test_a_new_layer_publishes_a_new_version_of_every_function(translated):
    assert _changed(translated[0], translated[len(READ) + 1]) == set(VERSIONED)


def test_new_code_publishes_a_new_version_of_its_function_only(translated):
    assert _changed(translated[0], translated[len(READ) + 2]) == {"QueryFunction"}


def _deployed(value):
    """The value CloudFormation deploys for Fn::Select of a literal list."""
    if isinstance(value, dict) and set(value) == {"Fn::Select"}:
        index, items = value["Fn::Select"]
        return _deployed(items[int(index)])
    return value


def test_every_function_is_deployed_with_active_tracing_whatever_the_values(translated):
    """The values go into the version's hash, not into the deployed configuration."""
    for resources in translated:
        functions = [r for r in resources.values() if r["Type"] == "AWS::Lambda::Function"]
        assert len(functions) >= len(VERSIONED)
        for function in functions:
            if "Code" in function["Properties"] and "ZipFile" in function["Properties"]["Code"]:
                continue  # the inline network check, outside the Globals
            assert _deployed(function["Properties"]["TracingConfig"]["Mode"]) == "Active"
