"""template.yaml as data, read against AWS's rules for a first deploy in a fresh account and for a
stack an operator runs: each function's permissions and secrets, the order of the deploy, what
holds data and how it is deleted, the parameters the template refuses, the network and its
check, rotation, the alarms and the dashboard."""

from __future__ import annotations

import json
import re
import sys
import types

import boto3
import pytest
from conftest import ROOT
from moto import mock_aws

from gligabao.limits import HNSW_MAX_VECTOR_DIMENSIONS
from gligabao.local.template_routes import load_template
from gligabao.settings import Settings

API_FUNCTIONS = {
    "SystemFunction",
    "DatasetsFunction",
    "RememberFunction",
    "QueryFunction",
    "GraphFunction",
    "SessionsFunction",
    "ForgetFunction",
    "CorrectionsFunction",
    "TrajectoriesFunction",
}
# The secrets each function needs, and nothing more (its role may read exactly these).
NEEDED_SECRETS = {
    "SystemFunction": {"ProviderKeysSecret", "DatabaseAppSecret"},  # health lists the providers
    "RememberFunction": {"ProviderKeysSecret", "DatabaseAppSecret"},
    "QueryFunction": {"ProviderKeysSecret", "DatabaseAppSecret"},
    "RememberWorkerFunction": {"ProviderKeysSecret", "DatabaseAppSecret"},
    "DatasetsFunction": {"DatabaseAppSecret"},
    "GraphFunction": {"DatabaseAppSecret"},
    "SessionsFunction": {"DatabaseAppSecret"},
    "ForgetFunction": {"DatabaseAppSecret"},
    "CorrectionsFunction": {"ProviderKeysSecret", "DatabaseAppSecret"},  # embeddings
    "TrajectoriesFunction": {"DatabaseAppSecret"},
    "MigrateFunction": {
        "DatabaseSecret",
        "DatabaseAppSecret",
    },  # migrates as the owner, sets the app's password
}
SECRET_VARIABLES = {
    "GB_SECRETS_ARN": "ProviderKeysSecret",
    "GB_DB_APP_SECRET_ARN": "DatabaseAppSecret",
    "GB_DB_SECRET_ARN": "DatabaseSecret",
}
# The migrate function also rotates the service role's secret: that secret only.
ROTATION_GRANTS = {
    "MigrateFunction": {
        (action, "DatabaseAppSecret")
        for action in (
            "secretsmanager:DescribeSecret",
            "secretsmanager:PutSecretValue",
            "secretsmanager:UpdateSecretVersionStage",
        )
    }
}
LONGEST_STACK_NAME = "s" * 128  # CloudFormation's limit


@pytest.fixture(scope="module")
def template() -> dict:
    return load_template(ROOT / "template.yaml")


def _resources(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def _function_env(template: dict, name: str) -> dict:
    defaults = template["Globals"]["Function"]["Environment"]["Variables"]
    own = template["Resources"][name]["Properties"].get("Environment", {}).get("Variables", {})
    return {**defaults, **own}


def _role_of(template: dict, function: str) -> str:
    return template["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"][0]


def _policy_documents(template: dict, role: str) -> list[tuple[str | None, dict]]:
    """(condition, document) of every policy a role holds: its own (a conditional one with its
    condition), the template's managed policies it names, and any policy resource naming it."""
    props = template["Resources"][role]["Properties"]
    documents = []
    for policy in props.get("Policies", []):
        condition = None
        if "Fn::If" in policy:
            condition, policy, otherwise = policy["Fn::If"]
            assert otherwise == {"Ref": "AWS::NoValue"}, role
        documents.append((condition, policy["PolicyDocument"]))
    for arn in props.get("ManagedPolicyArns", []):
        assert set(arn) == {"Ref"}, f"{role}: only the template's own managed policies"
        documents.append((None, template["Resources"][arn["Ref"]]["Properties"]["PolicyDocument"]))
    for name, resource in template["Resources"].items():
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"):
            attached = [*resource["Properties"].get("Roles", []), resource["Properties"].get("RoleName")]
            assert {"Ref": role} not in attached, f"{name} adds to {role}"
    return documents


def _grants(template: dict, role: str) -> list[tuple[str, object]]:
    """(action, resource) pairs of a role, conditional policies included."""
    pairs = []
    for _, document in _policy_documents(template, role):
        for statement in document["Statement"]:
            assert statement["Effect"] == "Allow"
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            resources = (
                statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            )
            pairs += [(action, resource) for action in actions for resource in resources]
    return pairs


def _readable_secrets(template: dict, role: str) -> set[str]:
    return {
        resource["Ref"]
        for action, resource in _grants(template, role)
        if action.startswith("secretsmanager:") and isinstance(resource, dict)
    }


def _events(template: dict, name: str) -> dict:
    return template["Resources"][name]["Properties"].get("Events") or {}


# --- per function: resources and permissions -----------------------------------------------------


def test_every_function_is_listed_with_the_secrets_it_needs(template):
    assert set(_resources(template, "AWS::Serverless::Function")) == set(NEEDED_SECRETS)


@pytest.mark.parametrize("function", sorted(NEEDED_SECRETS))
def test_a_function_can_read_exactly_the_secrets_it_needs_and_names_them(template, function):
    role = _role_of(template, function)
    assert _readable_secrets(template, role) == NEEDED_SECRETS[function]
    env = _function_env(template, function)
    named = {secret for variable, secret in SECRET_VARIABLES.items() if env.get(variable) == {"Ref": secret}}
    assert named == NEEDED_SECRETS[function]
    assert all(
        action == "secretsmanager:GetSecretValue"
        or (action, resource.get("Ref")) in ROTATION_GRANTS.get(function, set())
        for action, resource in _grants(template, role)
        if "secrets" in action
    )


def test_only_the_proxy_and_the_migrations_can_read_the_master_user_s_secret(template):
    readers = {
        role
        for role in _resources(template, "AWS::IAM::Role")
        if "DatabaseSecret" in _readable_secrets(template, role)
    }
    assert readers == {"MigrateFunctionRole", "DatabaseProxyRole"}


@pytest.mark.parametrize("function", sorted(NEEDED_SECRETS))
def test_a_function_writes_only_its_own_log_group_and_traces(template, function):
    role = _role_of(template, function)
    own = template["Resources"][function]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    log_groups = {r["Fn::GetAtt"][0] for a, r in _grants(template, role) if a.startswith("logs:")}
    assert log_groups == {own}
    assert ("xray:PutTraceSegments", "*") in _grants(template, role)


def test_every_function_has_a_role_of_its_own(template):
    roles = [_role_of(template, function) for function in NEEDED_SECRETS]
    assert len(set(roles)) == len(roles)


# What each function calls (handlers in functions/*/app.py, the core in layers/core/gligabao):
# every function writes its logs and traces and runs in the VPC; the provider keys for those that
# call a model or list the configured ones (health); SQS: remember sends (aws/job_queue.py), the
# worker's event source receives and deletes and the worker sets a failed job's backoff.
LOGS = {"logs:CreateLogStream", "logs:PutLogEvents"}
TRACES = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
VPC = {
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
}
SECRETS = {"secretsmanager:GetSecretValue"}
EVERY_FUNCTION = LOGS | TRACES | VPC | SECRETS
ACTIONS = {
    "SystemFunction": EVERY_FUNCTION,
    "RememberFunction": EVERY_FUNCTION | {"sqs:SendMessage"},
    "QueryFunction": EVERY_FUNCTION,
    "RememberWorkerFunction": EVERY_FUNCTION
    | {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"},
    "DatasetsFunction": EVERY_FUNCTION,
    "GraphFunction": EVERY_FUNCTION,
    "SessionsFunction": EVERY_FUNCTION,
    "TrajectoriesFunction": EVERY_FUNCTION,
    "ForgetFunction": EVERY_FUNCTION,
    "CorrectionsFunction": EVERY_FUNCTION,
    # the deploy-time network check, outside the VPC: reads the subnets' routes
    "NetworkCheckFunction": LOGS | {"ec2:DescribeRouteTables", "ec2:DescribeSubnets"},
}
# Granted only under a condition: Claude on Bedrock (LlmProvider bedrock), Amazon Location (geo on
# with the aws-location resolver); to the functions that call a model or resolve places.
MODELS = {
    "UseBedrock": {"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"},
    "UseAwsLocation": {"geo:SearchPlaceIndexForText"},
}
CONDITIONAL_ACTIONS = {"RememberFunction": MODELS, "QueryFunction": MODELS, "RememberWorkerFunction": MODELS}


def _actions(document: dict) -> set[str]:
    found = set()
    for statement in document["Statement"]:
        assert statement["Effect"] == "Allow"
        found |= set(statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])
    return found


@pytest.mark.parametrize("function", sorted(ACTIONS))
def test_a_function_s_role_grants_exactly_the_actions_it_uses(template, function):
    always: set[str] = set()
    conditional: dict[str, set[str]] = {}
    for condition, document in _policy_documents(template, _role_of(template, function)):
        if condition is None:
            always |= _actions(document)
        else:
            conditional.setdefault(condition, set()).update(_actions(document))
    assert always == ACTIONS[function]
    assert conditional == CONDITIONAL_ACTIONS.get(function, {})


def test_every_function_but_the_migrations_is_in_the_table_of_actions(template):
    functions = set(_resources(template, "AWS::Serverless::Function")) | set(
        _resources(template, "AWS::Lambda::Function")
    )
    assert set(ACTIONS) == functions - {"MigrateFunction"}


# --- every HTTP route is authorized ---------------------------------------------------------------


def test_every_http_route_is_in_the_api_definition_with_the_auth_mode_s_security(template):
    paths = template["Resources"]["HttpApi"]["Properties"]["DefinitionBody"]["paths"]
    secured = {"Fn::If": ["AuthIsJwt", [{"JwtAuthorizer": []}], [{"AWS_IAM": []}]]}
    routes = 0
    for function in _resources(template, "AWS::Serverless::Function"):
        for event in _events(template, function).values():
            if event["Type"] != "HttpApi":
                continue
            routes += 1
            path, method = event["Properties"]["Path"], event["Properties"]["Method"]
            assert event["Properties"]["ApiId"] == {"Ref": "HttpApi"}, (function, path)
            operations = paths[path]
            operation = operations.get("x-amazon-apigateway-any-method") or operations[method.lower()]
            assert operation["security"] == secured, (function, path, method)
    assert routes >= 15
    assert template["Parameters"]["AuthMode"]["Default"] == "iam"  # a new stack is never open


# --- the order of a deploy ---------------------------------------------------------------------------


def test_migrations_run_before_any_function_that_serves_is_updated(template):
    for function in API_FUNCTIONS | {"RememberWorkerFunction"}:
        assert template["Resources"][function]["DependsOn"] == "Migrations", function
    assert "DependsOn" not in template["Resources"]["MigrateFunction"]
    migrations = template["Resources"]["Migrations"]
    # the proxy's target group too, in production (through DatabaseTargetsReady)
    assert {"DatabaseInstance", "DatabaseTargetsReady"} <= set(migrations["DependsOn"])


def test_the_migrations_name_the_newest_migration_file_as_their_schema_version(template):
    """A rollback is recognised by its older SchemaVersion: the template's must be its code's."""
    from gligabao.db.migrate import newest_migration

    assert int(template["Resources"]["Migrations"]["Properties"]["SchemaVersion"]) == newest_migration()


def test_the_migrate_function_is_never_retried_by_lambda(template):
    """CloudFormation invokes it asynchronously: a retry would be a second migrator beside the first."""
    properties = template["Resources"]["MigrateFunction"]["Properties"]
    assert properties["EventInvokeConfig"]["MaximumRetryAttempts"] == 0


def test_the_network_is_checked_before_the_database_is_created(template):
    assert template["Resources"]["DatabaseSubnetGroup"]["DependsOn"] == "NetworkCheck"
    check = template["Resources"]["NetworkCheck"]["Properties"]
    assert check["ServiceToken"] == {"Fn::GetAtt": ["NetworkCheckFunction", "Arn"]}
    assert check["ServiceTimeout"] <= 120  # a check that cannot answer fails fast too
    function = template["Resources"]["NetworkCheckFunction"]
    assert function["Type"] == "AWS::Lambda::Function"
    assert "VpcConfig" not in function["Properties"]  # outside the VPC it checks


def test_the_master_secret_rotates_after_the_first_migrations_never_during_a_deploy(template):
    rotation = template["Resources"]["DatabaseSecretRotation"]
    assert rotation["Type"] == "AWS::SecretsManager::RotationSchedule"
    assert "Migrations" in rotation["DependsOn"]
    props = rotation["Properties"]
    assert props["SecretId"] == {"Ref": "DatabaseSecret"}
    assert props["RotateImmediatelyOnUpdate"] is False
    assert props["HostedRotationLambda"]["RotationType"] == "PostgreSQLSingleUser"
    subnets = props["HostedRotationLambda"]["VpcSubnetIds"]["Fn::Join"][1]
    assert subnets == template["Globals"]["Function"]["VpcConfig"]["SubnetIds"]
    assert props["HostedRotationLambda"]["VpcSecurityGroupIds"] == {"Ref": "RotationSecurityGroup"}
    ingress = template["Resources"]["DatabaseFromRotationIngress"]["Properties"]
    assert ingress["GroupId"] == {"Ref": "DatabaseSecurityGroup"}
    assert ingress["SourceSecurityGroupId"] == {"Ref": "RotationSecurityGroup"}
    assert (ingress["FromPort"], ingress["ToPort"]) == (5432, 5432)


def test_the_service_role_s_secret_is_rotated_by_the_migrate_function_after_the_first_migrations(template):
    rotation = template["Resources"]["DatabaseAppSecretRotation"]
    assert rotation["Type"] == "AWS::SecretsManager::RotationSchedule"
    assert {"Migrations", "MigrateFunctionRotationPermission"} <= set(rotation["DependsOn"])
    props = rotation["Properties"]
    assert props["SecretId"] == {"Ref": "DatabaseAppSecret"}
    assert props["RotationLambdaARN"] == {"Fn::GetAtt": ["MigrateFunction", "Arn"]}
    assert props["RotateImmediatelyOnUpdate"] is False
    assert props["RotationRules"] == {"ScheduleExpression": "rate(30 days)"}
    permission = template["Resources"]["MigrateFunctionRotationPermission"]["Properties"]
    assert permission["FunctionName"] == {"Fn::GetAtt": ["MigrateFunction", "Arn"]}
    assert permission["Principal"] == "secretsmanager.amazonaws.com"
    assert permission["SourceArn"] == {"Ref": "DatabaseAppSecret"}
    # its testSecret logs in to the cluster itself: the rotation group, besides the functions' one
    assert template["Resources"]["MigrateFunction"]["Properties"]["VpcConfig"] == {
        "SecurityGroupIds": [{"Ref": "RotationSecurityGroup"}]
    }


def test_deploys_need_the_capabilities_of_the_transforms(template):
    config = (ROOT / "samconfig.toml").read_text()
    assert re.search(r'capabilities = "CAPABILITY_IAM CAPABILITY_AUTO_EXPAND"', config)


# --- what holds data, and a first deploy that rolls back ----------------------------------------------


def test_every_resource_that_holds_data_has_a_deliberate_deletion_and_replacement_policy(template):
    kinds = {
        "AWS::RDS::DBCluster",
        "AWS::RDS::DBInstance",
        "AWS::SecretsManager::Secret",
        "AWS::SQS::Queue",
        "AWS::Logs::LogGroup",
    }
    for name, resource in template["Resources"].items():
        if resource["Type"] in kinds:
            assert resource.get("DeletionPolicy") in ("Delete", "Snapshot", "Retain"), name
            assert resource.get("UpdateReplacePolicy") == resource["DeletionPolicy"], name
    cluster = template["Resources"]["DatabaseCluster"]
    assert cluster["DeletionPolicy"] == "Snapshot"


def test_deletion_protection_is_off_until_the_operator_turns_it_on(template):
    """A first deploy that fails rolls back: a protected cluster could not be deleted."""
    assert template["Parameters"]["DeletionProtection"]["Default"] == "false"
    assert template["Resources"]["DatabaseCluster"]["Properties"]["DeletionProtection"] == {
        "Fn::If": ["IsDeletionProtected", True, False]
    }


# --- parameters that cannot work are refused -----------------------------------------------------------


def test_the_embedding_size_is_capped_where_the_hnsw_index_stops_whatever_the_default(template):
    parameter = template["Parameters"]["EmbeddingDimensions"]
    assert parameter["MaxValue"] == HNSW_MAX_VECTOR_DIMENSIONS
    assert parameter["MinValue"] >= 1
    assert parameter["MinValue"] <= parameter["Default"] <= parameter["MaxValue"]
    assert parameter["Default"] == Settings().embedding_dimensions  # the template and the code agree


def test_the_minimum_capacity_cannot_be_zero_behind_rds_proxy(template):
    parameter = template["Parameters"]["DatabaseMinCapacity"]
    assert parameter["MinValue"] == 0.5
    assert "never pauses" in parameter["Description"]


def _stack_id(name: str) -> str:
    return f"arn:aws:cloudformation:us-east-1:123456789012:stack/{name}/0c0b0a90-1f2e-11ef-8a4c-0affd1a2b3c4"


def _evaluate(value, stack_name: str):
    """The few intrinsic functions the names use, for a given stack."""
    if isinstance(value, str):
        return value
    ((function, args),) = value.items()
    if function == "Ref":
        return {"AWS::StackName": stack_name, "AWS::StackId": _stack_id(stack_name)}[args]
    if function == "Fn::Sub":
        text = args if isinstance(args, str) else args[0]
        return text.replace("${AWS::StackName}", stack_name)
    if function == "Fn::Join":
        return args[0].join(_evaluate(item, stack_name) for item in args[1])
    if function == "Fn::Select":
        return _evaluate(args[1], stack_name)[int(args[0])]
    if function == "Fn::Split":
        return _evaluate(args[1], stack_name).split(args[0])
    raise AssertionError(f"unexpected {function}")


def test_the_proxy_name_is_valid_for_any_stack_name(template):
    """RDS Proxy names: 1-60 letters, digits and hyphens, a letter first, no trailing or double hyphen."""
    name = template["Resources"]["DatabaseProxy"]["Properties"]["DBProxyName"]
    for stack in (LONGEST_STACK_NAME, "a--b", "gb"):
        proxy = _evaluate(name, stack)
        assert len(proxy) <= 60, proxy
        assert re.fullmatch(r"[A-Za-z](?!.*--)[A-Za-z0-9-]*[A-Za-z0-9]", proxy), proxy


# Name properties built from the stack's name, and AWS's limit on each.
NAME_LIMITS = {
    ("AWS::Serverless::LayerVersion", "LayerName"): 140,
    ("AWS::Logs::LogGroup", "LogGroupName"): 512,
    ("AWS::SecretsManager::Secret", "Name"): 512,
    ("AWS::CloudWatch::Dashboard", "DashboardName"): 255,
}


def test_every_name_built_from_the_stack_name_fits_aws_s_limits(template):
    checked = 0
    for name, resource in template["Resources"].items():
        for (kind, prop), limit in NAME_LIMITS.items():
            if resource["Type"] == kind and prop in resource.get("Properties", {}):
                value = _evaluate(resource["Properties"][prop], LONGEST_STACK_NAME)
                assert len(value) <= limit, (name, len(value))
                checked += 1
    assert checked >= 12


def test_your_own_network_needs_a_vpc_and_subnets(template):
    rule = template["Rules"]["OwnNetworkNeedsVpcAndSubnets"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "CreateNetwork"}, "false"]}
    asserts = [a["Assert"] for a in rule["Assertions"]]
    assert {"Fn::Not": [{"Fn::Equals": [{"Ref": "VpcId"}, ""]}]} in asserts
    assert {"Fn::Not": [{"Fn::Contains": [{"Ref": "PrivateSubnetIds"}, ""]}]} in asserts
    assert template["Parameters"]["CreateNetwork"]["Default"] == "true"  # `sam deploy --guided` alone
    assert "NAT" in template["Parameters"]["PrivateSubnetIds"]["Description"]


# --- RDS Proxy and concurrency ----------------------------------------------------------------------


def test_a_full_pool_fails_fast_well_within_every_function_s_timeout(template):
    pool = template["Resources"]["DatabaseProxyTargetGroup"]["Properties"]["ConnectionPoolConfigurationInfo"]
    default_timeout = template["Globals"]["Function"]["Timeout"]
    for function in NEEDED_SECRETS:
        timeout = template["Resources"][function]["Properties"].get("Timeout", default_timeout)
        assert pool["ConnectionBorrowTimeout"] * 2 <= timeout, function


def test_the_proxy_closes_the_idle_sessions_of_frozen_containers_within_two_minutes(template):
    assert template["Resources"]["DatabaseProxy"]["Properties"]["IdleClientTimeout"] <= 120


DEVELOPMENT_CONCURRENCY = 10  # each API function's cap in the development profile


def test_reserved_concurrency_of_every_api_function_is_a_parameter_none_by_default(template):
    assert template["Parameters"]["ApiReservedConcurrency"]["Default"] == 0
    for function in API_FUNCTIONS:
        assert template["Resources"][function]["Properties"]["ReservedConcurrentExecutions"] == {
            "Fn::If": [
                "HasApiReservedConcurrency",
                {"Ref": "ApiReservedConcurrency"},
                {"Fn::If": ["IsDevelopment", DEVELOPMENT_CONCURRENCY, {"Ref": "AWS::NoValue"}]},
            ]
        }, function


# --- profiles: production (RDS Proxy) and development (no proxy, a cluster that pauses) ---------------


def test_the_profile_is_production_by_default(template):
    profile = template["Parameters"]["Profile"]
    assert profile["Default"] == "production"
    assert profile["AllowedValues"] == ["production", "development"]
    assert template["Conditions"]["UseProxy"] == {"Fn::Equals": [{"Ref": "Profile"}, "production"]}
    assert template["Conditions"]["IsDevelopment"] == {"Fn::Equals": [{"Ref": "Profile"}, "development"]}


PROXY_RESOURCES = {
    "DatabaseProxy",
    "DatabaseProxyTargetGroup",
    "DatabaseProxyRole",
    "ProxySecurityGroup",
    "LambdaToProxyEgress",
    "ProxyToDatabaseEgress",
    "ProxyBorrowLatencyAlarm",
}


def test_the_proxy_and_everything_about_it_exist_in_production_only(template):
    with_proxy = {name for name, r in template["Resources"].items() if r.get("Condition") == "UseProxy"}
    assert with_proxy == PROXY_RESOURCES
    assert template["Outputs"]["DatabaseProxyEndpoint"]["Condition"] == "UseProxy"


def _references(value, allowed_under: str | None = None) -> set[str]:
    """Resources a value names, leaving out those named in the UseProxy branch of a Fn::If."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "Fn::If" and item[0] == "UseProxy":
                found |= _references(item[2])
                continue
            if key == "Ref" and isinstance(item, str):
                found.add(item)
            elif key == "Fn::GetAtt":
                found.add(item[0] if isinstance(item, list) else item.split(".")[0])
            elif key == "Fn::Sub":
                text = item if isinstance(item, str) else item[0]
                found |= set(re.findall(r"\$\{([A-Za-z0-9]+)", text))
            found |= _references(item)
    elif isinstance(value, list):
        for item in value:
            found |= _references(item)
    return found


def test_nothing_outside_the_proxy_names_it_but_under_the_production_condition(template):
    """A development stack has no proxy: a reference to it anywhere else would fail the deploy."""
    for name, resource in template["Resources"].items():
        if resource.get("Condition") == "UseProxy":
            continue
        named = _references(resource.get("Properties", {})) | _references(resource.get("Metadata", {}))
        named |= set(resource.get("DependsOn", []) if isinstance(resource.get("DependsOn"), list) else [])
        assert not named & PROXY_RESOURCES, (name, named & PROXY_RESOURCES)
    assert not _references(template["Globals"]) & PROXY_RESOURCES


def test_in_development_the_functions_reach_the_cluster_which_lets_them_in(template):
    ingress = template["Resources"]["DatabaseSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    [rule] = ingress
    assert rule["SourceSecurityGroupId"] == {
        "Fn::If": ["UseProxy", {"Ref": "ProxySecurityGroup"}, {"Ref": "LambdaSecurityGroup"}]
    }
    egress = template["Resources"]["LambdaToDatabaseEgress"]
    assert egress["Condition"] == "IsDevelopment"
    assert egress["Properties"]["DestinationSecurityGroupId"] == {"Ref": "DatabaseSecurityGroup"}
    assert (egress["Properties"]["FromPort"], egress["Properties"]["ToPort"]) == (5432, 5432)


def test_in_development_the_cluster_scales_to_zero_and_pauses_once_its_sessions_are_closed(template):
    cluster = template["Resources"]["DatabaseCluster"]["Properties"]
    scaling = cluster["ServerlessV2ScalingConfiguration"]
    assert scaling["MinCapacity"] == {"Fn::If": ["IsDevelopment", 0, {"Ref": "DatabaseMinCapacity"}]}
    when, pause, otherwise = scaling["SecondsUntilAutoPause"]["Fn::If"]
    assert (when, otherwise) == ("IsDevelopment", {"Ref": "AWS::NoValue"})
    assert 300 <= pause <= 86400  # Aurora's bounds
    assert cluster["DBClusterParameterGroupName"] == {
        "Fn::If": ["IsDevelopment", {"Ref": "DevelopmentClusterParameters"}, {"Ref": "AWS::NoValue"}]
    }
    parameters = template["Resources"]["DevelopmentClusterParameters"]
    assert parameters["Condition"] == "IsDevelopment"
    assert parameters["Properties"]["Family"] == "aurora-postgresql" + cluster["EngineVersion"].split(".")[0]
    # a frozen container's session is closed well before the pause is due
    assert int(parameters["Properties"]["Parameters"]["idle_session_timeout"]) < pause * 1000


def test_in_development_the_functions_stay_within_the_database_s_connections(template):
    """No proxy: each execution holds one connection. Aurora PostgreSQL's max_connections is
    LEAST(memory / 9531392, 5000) at the maximum capacity (2 GiB an ACU); the least maximum is
    1 ACU. The worker at its largest maximum concurrency is not bounded so: its default is."""
    least_max_connections = (2 * 1024**3) // 9531392
    params = template["Parameters"]
    worker = params["WorkerMaxConcurrency"]["Default"]
    migrations_and_rotation = 2
    used = len(API_FUNCTIONS) * DEVELOPMENT_CONCURRENCY + worker + migrations_and_rotation
    assert params["DatabaseMaxCapacity"]["MinValue"] == 1
    assert used < least_max_connections * 0.5, (used, least_max_connections)


def test_the_dashboard_names_the_proxy_only_when_there_is_one(template):
    [_, variables] = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    assert variables == {
        "ProxyName": {"Fn::If": ["UseProxy", {"Ref": "DatabaseProxy"}, "none (development profile)"]}
    }


# --- operations: tracing, alarms, dashboard ------------------------------------------------------------


def test_every_function_is_traced_with_x_ray(template):
    # Active, the item CloudFormation deploys; the rest is the versions' fingerprint
    # (tests/unit/test_template_versions.py).
    index, items = template["Globals"]["Function"]["Tracing"]["Fn::Select"]
    assert items[index] == "Active"
    assert "aws-lambda-powertools[tracer]==" in (ROOT / "layers/core/requirements.in").read_text()
    assert "aws-xray-sdk==" in (ROOT / "layers/core/requirements.txt").read_text()


def _alarm_metrics(alarm: dict) -> list[dict]:
    return [m["MetricStat"]["Metric"] for m in alarm.get("Metrics", []) if "MetricStat" in m]


def test_the_error_alarm_counts_server_errors_not_a_user_s_404(template):
    alarm = template["Resources"]["OperationErrorsAlarm"]["Properties"]
    [query] = [m["Expression"] for m in alarm["Metrics"] if "Expression" in m]
    assert query == "SELECT SUM(ServerErrors) FROM gligabao"
    api = template["Resources"]["ApiServerErrorsAlarm"]["Properties"]
    assert (api["Namespace"], api["MetricName"]) == ("AWS/ApiGateway", "5xx")


def test_throttles_of_every_function_that_serves_are_alarmed(template):
    alarm = template["Resources"]["FunctionThrottlesAlarm"]["Properties"]
    watched = {
        m["Dimensions"][0]["Value"]["Ref"] for m in _alarm_metrics(alarm) if m["MetricName"] == "Throttles"
    }
    assert watched == API_FUNCTIONS | {"RememberWorkerFunction"}
    assert [m["Expression"] for m in alarm["Metrics"] if "Expression" in m] == ["SUM(METRICS())"]


def test_a_duration_near_the_timeout_is_alarmed(template):
    alarm = template["Resources"]["ApiDurationNearTimeoutAlarm"]["Properties"]
    watched = {m["Dimensions"][0]["Value"]["Ref"] for m in _alarm_metrics(alarm)}
    assert watched == API_FUNCTIONS
    assert alarm["Threshold"] == round(0.8 * template["Globals"]["Function"]["Timeout"] * 1000)
    worker = template["Resources"]["WorkerDurationNearTimeoutAlarm"]["Properties"]
    assert (
        worker["Threshold"]
        == 0.8 * template["Resources"]["RememberWorkerFunction"]["Properties"]["Timeout"] * 1000
    )


def test_the_proxy_s_connection_borrow_waits_are_alarmed_before_requests_fail(template):
    alarm = template["Resources"]["ProxyBorrowLatencyAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/RDS", "DatabaseConnectionsBorrowLatency")
    assert alarm["Dimensions"] == [{"Name": "ProxyName", "Value": {"Ref": "DatabaseProxy"}}]
    pool = template["Resources"]["DatabaseProxyTargetGroup"]["Properties"]["ConnectionPoolConfigurationInfo"]
    assert alarm["Threshold"] < pool["ConnectionBorrowTimeout"] * 1_000_000  # microseconds


def test_every_alarm_notifies_the_alarm_topic_when_one_is_given(template):
    for name, alarm in _resources(template, "AWS::CloudWatch::Alarm").items():
        assert alarm["Properties"]["AlarmActions"] == {
            "Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]
        }, name


def test_the_dashboard_shows_requests_errors_latency_model_calls_tokens_cost_and_the_database(template):
    body_template = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"][0]
    body = json.loads(re.sub(r"\$\{([A-Za-z:]+)\}", lambda m: m.group(1).replace("::", "-"), body_template))
    metrics = [tuple(m[:2]) for w in body["widgets"] for m in w["properties"]["metrics"] if m[0] != "..."]
    for expected in (
        ("AWS/ApiGateway", "Count"),
        ("AWS/ApiGateway", "4xx"),
        ("AWS/ApiGateway", "5xx"),
        ("gligabao", "ServerErrors"),
        ("gligabao", "Latency"),
        ("gligabao", "ModelCalls"),
        ("gligabao", "InputTokens"),
        ("gligabao", "OutputTokens"),
        ("gligabao", "CostUSD"),
        ("AWS/RDS", "ServerlessDatabaseCapacity"),
        ("AWS/RDS", "DatabaseConnections"),
        ("AWS/RDS", "DatabaseConnectionsBorrowLatency"),
        ("AWS/RDS", "DatabaseConnectionsCurrentlySessionPinned"),  # nothing pins beyond a transaction
    ):
        assert expected in metrics, expected
    series = [tuple(m[:4]) for w in body["widgets"] for m in w["properties"]["metrics"] if m[0] == "gligabao"]
    for metric in ("ServerErrors", "ModelCalls", "InputTokens", "CostUSD"):  # the asynchronous work too
        assert ("gligabao", metric, "Operation", "remember_job") in series, metric
    latency = [w for w in body["widgets"] if "p50" in w["properties"]["title"]]
    stats = [m[-1]["stat"] for m in latency[0]["properties"]["metrics"]]
    assert stats == ["p50", "p95", "p99"] * 2


# --- the network check (the inline code of NetworkCheckFunction, against moto) --------------------------


class _Answers(types.ModuleType):
    SUCCESS, FAILED = "SUCCESS", "FAILED"

    def __init__(self):
        super().__init__("cfnresponse")
        self.sent: list[tuple[str, str]] = []

    def send(self, event, context, status, data, physical_id=None, no_echo=False, reason=None):
        self.sent.append((status, reason))


@pytest.fixture
def network_check(template, monkeypatch, aws_env):
    answers = _Answers()
    monkeypatch.setitem(sys.modules, "cfnresponse", answers)
    code = template["Resources"]["NetworkCheckFunction"]["Properties"]["Code"]["ZipFile"]
    assert len(code) <= 4096  # CloudFormation's limit on inline code
    module = types.ModuleType("network_check")
    exec(compile(code, "network_check", "exec"), module.__dict__)

    def run(vpc: str, subnets: list[str]) -> tuple[str, str]:
        event = {"RequestType": "Create", "ResourceProperties": {"VpcId": vpc, "SubnetIds": subnets}}
        module.handler(event, None)
        return answers.sent[-1]

    with mock_aws():
        yield run


def _network(nat: bool = True, zones: tuple[str, ...] = ("us-east-1a", "us-east-1b")):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.0.0/24", AvailabilityZone="us-east-1a")["Subnet"][
        "SubnetId"
    ]
    public_table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_table, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_table, SubnetId=public)
    private = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.9.{16 * (i + 1)}.0/20", AvailabilityZone=zone)["Subnet"][
            "SubnetId"
        ]
        for i, zone in enumerate(zones)
    ]
    private_table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    if nat:
        allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
        gateway = ec2.create_nat_gateway(SubnetId=public, AllocationId=allocation)["NatGateway"][
            "NatGatewayId"
        ]
        ec2.create_route(RouteTableId=private_table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=gateway)
    for subnet in private:
        ec2.associate_route_table(RouteTableId=private_table, SubnetId=subnet)
    return vpc, public, private


def test_private_subnets_behind_a_nat_gateway_pass(network_check):
    vpc, _, private = _network()
    assert network_check(vpc, private) == ("SUCCESS", "the subnets route to the internet")


def test_a_subnet_without_a_route_to_the_internet_fails_naming_it(network_check):
    vpc, _, private = _network(nat=False)
    status, reason = network_check(vpc, private)
    assert status == "FAILED"
    for subnet in private:
        assert f"{subnet} has no route to the internet (0.0.0.0/0)" in reason
    assert "NAT gateway" in reason


def test_a_public_subnet_fails_functions_there_get_no_public_address(network_check):
    vpc, public, private = _network()
    status, reason = network_check(vpc, [public, private[1]])
    assert status == "FAILED"
    assert f"{public} is a public subnet" in reason
    assert private[1] not in reason


def test_subnets_in_one_availability_zone_fail(network_check):
    vpc, _, private = _network(zones=("us-east-1a", "us-east-1a"))
    status, reason = network_check(vpc, private)
    assert status == "FAILED"
    assert "at least two Availability Zones" in reason


def test_a_subnet_of_another_vpc_fails(network_check):
    _, _, private = _network()
    other, _, _ = _network()
    status, reason = network_check(other, private)
    assert status == "FAILED"
    assert f"{private[0]} is not in {other}" in reason


def test_the_created_network_routes_its_private_subnets_through_the_nat_gateway(template):
    resources = template["Resources"]
    route = resources["PrivateDefaultRoute"]["Properties"]
    assert (route["DestinationCidrBlock"], route["NatGatewayId"]) == ("0.0.0.0/0", {"Ref": "NatGateway"})
    assert resources["NatGateway"]["Properties"]["SubnetId"] == {"Ref": "PublicSubnetA"}
    for subnet in ("PrivateSubnetA", "PrivateSubnetB"):
        association = resources[f"{subnet}Routes"]["Properties"]
        assert association == {"SubnetId": {"Ref": subnet}, "RouteTableId": {"Ref": "PrivateRouteTable"}}
        assert resources[subnet]["Condition"] == "IsNetworkCreated"
    zones = {
        json.dumps(resources[s]["Properties"]["AvailabilityZone"])
        for s in ("PrivateSubnetA", "PrivateSubnetB")
    }
    assert len(zones) == 2
    assert resources["NetworkCheck"]["Properties"]["RoutesReady"]["Fn::If"][1][0] == {
        "Ref": "PrivateDefaultRoute"
    }


# --- reproducible builds: the layer is built from a complete lock with hashes -----------------------


def _lock() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of layers/core/requirements.txt."""
    entries: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in (ROOT / "layers/core/requirements.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        requirement = re.match(r"^([A-Za-z0-9_.\-]+)==([^ \\;]+)", line)
        if requirement:
            current = requirement.group(1).lower().replace("_", "-")
            assert current not in entries, current
            entries[current] = (requirement.group(2), [])
            continue
        digest = re.match(r"^--hash=sha256:([0-9a-f]{64})", line)
        assert digest and current, f"unexpected line in the lock: {line}"
        entries[current][1].append(digest.group(1))
    return entries


def test_every_package_of_the_lock_is_pinned_with_hashes():
    lock = _lock()
    assert len(lock) >= 20  # the transitive dependencies too
    for name, (version, hashes) in lock.items():
        assert hashes, name
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!]*", version), (name, version)


def test_the_lock_holds_every_requirement_at_its_pinned_version():
    lock = _lock()
    for line in (ROOT / "layers/core/requirements.in").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, version = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[a-z,]+\])?==(\S+)$", line.strip()).groups()
        assert lock[name.lower().replace("_", "-")][0] == version, name
    for transitive in ("pydantic-core", "psycopg-binary", "httpx2", "botocore", "aws-xray-sdk"):
        assert transitive in lock, transitive


def test_the_layer_is_installed_from_the_lock_alone_with_its_hashes_checked():
    makefile = (ROOT / "layers/core/Makefile").read_text()
    assert '--require-hashes --no-deps --target "$(TARGET)" -r "$(HERE)/requirements.txt"' in makefile
    assert "--generate-hashes --python-platform $(LOCK_PLATFORM)" in makefile
    assert "LOCK_PLATFORM ?= aarch64-manylinux_2_28" in makefile
    # .pyc files name the layer's path on Lambda, not the build directory's: byte-identical builds
    assert '--invalidation-mode unchecked-hash -s "$(TARGET)" -p /opt/python "$(TARGET)"' in makefile
