"""template.yaml, checked without AWS: the functions, the layer, logs, IAM, the database."""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT

from gligabao.limits import Limits
from gligabao.local.template_routes import load_template

PRIVATE_SUBNETS = {
    "Fn::If": [
        "IsNetworkCreated",
        [{"Ref": "PrivateSubnetA"}, {"Ref": "PrivateSubnetB"}],
        {"Ref": "PrivateSubnetIds"},
    ]
}

EXPECTED_FUNCTIONS = {
    "system",
    "datasets",
    "remember",
    "remember_worker",
    "query",
    "graph",
    "sessions",
    "forget",
    "corrections",
    "migrate",
    "trajectories",
}


@pytest.fixture(scope="module")
def template() -> dict:
    return load_template(ROOT / "template.yaml")


def _resources(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def _functions(template: dict) -> dict[str, dict]:
    """Every function's properties, with the Globals merged in (the function's own win)."""
    defaults = template.get("Globals", {}).get("Function", {})
    merged = {}
    for name, resource in _resources(template, "AWS::Serverless::Function").items():
        props = {**defaults, **resource["Properties"]}
        if "VpcConfig" in resource["Properties"]:  # SAM merges maps and appends lists
            local_vpc = resource["Properties"]["VpcConfig"]
            global_vpc = defaults.get("VpcConfig", {})
            props["VpcConfig"] = {
                **global_vpc,
                **{k: global_vpc.get(k, []) + v if isinstance(v, list) else v for k, v in local_vpc.items()},
            }
        env = {
            **defaults.get("Environment", {}).get("Variables", {}),
            **resource["Properties"].get("Environment", {}).get("Variables", {}),
        }
        props["Environment"] = {"Variables": env}
        merged[name] = props
    return merged


def _statements(template: dict):
    for name, role in _resources(template, "AWS::IAM::Role").items():
        for policy in role["Properties"].get("Policies", []):
            if "Fn::If" in policy:  # a conditional policy: check the policy it may add
                policy = policy["Fn::If"][1]
            for statement in policy["PolicyDocument"]["Statement"]:
                yield name, statement
    for name, policy in _resources(template, "AWS::IAM::ManagedPolicy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            yield name, statement


def _as_list(value):
    return value if isinstance(value, list) else [value]


def test_the_template_is_sam_with_the_secrets_manager_transform_for_rotation(template):
    assert template["Transform"] == ["AWS::Serverless-2016-10-31", "AWS::SecretsManager-2024-09-16"]


def test_one_function_per_route_group(template):
    folders = {props["CodeUri"].strip("/").split("/")[-1] for props in _functions(template).values()}
    assert folders == EXPECTED_FUNCTIONS


@pytest.mark.parametrize("folder", sorted(EXPECTED_FUNCTIONS))
def test_every_function_folder_has_an_app_with_a_handler(template, folder):
    props = next(p for p in _functions(template).values() if p["CodeUri"].strip("/") == f"functions/{folder}")
    assert props["Handler"] == "app.handler"
    app = ROOT / props["CodeUri"] / "app.py"
    assert app.is_file(), f"{app} is missing"
    tree = ast.parse(app.read_text())
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    names |= {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    assert "handler" in names, f"{app} defines no `handler`"


def test_every_function_uses_the_layer_python312_arm64(template):
    layers = _resources(template, "AWS::Serverless::LayerVersion")
    assert list(layers) == ["CoreLayer"]
    for name, props in _functions(template).items():
        assert props["Runtime"] == "python3.12", name
        assert props["Architectures"] == ["arm64"], name
        assert {"Ref": "CoreLayer"} in props["Layers"], name
        assert props["VpcConfig"]["SubnetIds"] == PRIVATE_SUBNETS, name


def test_the_layer_is_built_by_its_makefile(template):
    layer = template["Resources"]["CoreLayer"]
    assert layer["Properties"]["ContentUri"].strip("/") == "layers/core"
    assert layer["Properties"]["CompatibleRuntimes"] == ["python3.12"]
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    assert layer["Metadata"]["BuildMethod"] == "makefile"
    makefile = (ROOT / "layers/core/Makefile").read_text()
    assert "build-CoreLayer:" in makefile
    assert "--invalidation-mode unchecked-hash" in makefile


def test_every_function_logs_to_its_own_group_with_retention(template):
    groups = _resources(template, "AWS::Logs::LogGroup")
    used = []
    for name, props in _functions(template).items():
        group = props["LoggingConfig"]["LogGroup"]["Ref"]
        assert group in groups, name
        assert groups[group]["Properties"]["RetentionInDays"], name
        used.append(group)
    assert len(set(used)) == len(used)


def test_http_functions_publish_an_alias_and_fit_the_api_timeout(template):
    for name, props in _functions(template).items():
        if not any(e["Type"] == "HttpApi" for e in props.get("Events", {}).values()):
            continue
        assert props["AutoPublishAlias"] == "live", name
        assert props["Timeout"] <= 29, name


def test_snapstart_only_on_the_functions_that_serve_the_users_data(template):
    """Not system (health, OpenAPI, 404), the worker (queued work) nor the migrations."""
    snapstart = {name for name, props in _functions(template).items() if "SnapStart" in props}
    assert snapstart == {
        "RememberFunction",
        "QueryFunction",
        "DatasetsFunction",
        "GraphFunction",
        "SessionsFunction",
        "ForgetFunction",
        "CorrectionsFunction",
        "TrajectoriesFunction",
    }
    for name in snapstart:
        assert template["Resources"][name]["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}


def test_routes_are_plainly_readable(template):
    routes = {}
    for name, props in _functions(template).items():
        for event in props.get("Events", {}).values():
            if event["Type"] == "SQS":
                continue
            assert event["Type"] == "HttpApi", name
            key = (event["Properties"]["Method"], event["Properties"]["Path"])
            assert key not in routes, key
            routes[key] = props["CodeUri"]
    assert routes[("GET", "/v1/gb/artifacts/{id}")].startswith("functions/sessions")
    assert routes[("DELETE", "/v1/gb/artifacts/{id}")].startswith("functions/forget")
    assert routes[("GET", "/v1/gb/entities/{id}")].startswith("functions/sessions")
    assert routes[("DELETE", "/v1/gb/entities/{id}")].startswith("functions/forget")
    assert routes[("DELETE", "/v1/gb/edges/{id}")].startswith("functions/forget")
    assert routes[("PATCH", "/v1/gb/edges/{id}")].startswith("functions/corrections")
    assert routes[("ANY", "/v1/gb/users/{user_id}")].startswith("functions/forget")
    assert routes[("GET", "/v1/gb/edges/{id}")].startswith("functions/sessions")
    assert routes[("ANY", "/v1/gb/edges")].startswith("functions/sessions")
    assert routes[("ANY", "/v1/gb/timeseries")].startswith("functions/sessions")
    assert routes[("ANY", "/v1/gb/timeseries/{id}")].startswith("functions/sessions")
    assert routes[("ANY", "/v1/gb/entities/{id}/timeseries")].startswith("functions/sessions")
    assert routes[("ANY", "/v1/gb/search")].startswith("functions/query")
    assert routes[("ANY", "$default")].startswith("functions/system")
    assert routes[("ANY", "/v1/gb/remember")].startswith("functions/remember")
    assert routes[("ANY", "/v1/gb/remember/batch")].startswith("functions/remember")
    assert routes[("ANY", "/v1/gb/eval/remember")].startswith("functions/remember")
    assert routes[("ANY", "/v1/gb/eval/query")].startswith("functions/query")
    assert routes[("ANY", "/v1/gb/datasets/{dataset}/graph")].startswith("functions/graph")
    assert routes[("ANY", "/v1/gb/trajectories/{id}")].startswith("functions/trajectories")


def test_the_environment_names_the_secrets_and_the_proxy(template):
    for name, props in _functions(template).items():
        env = props["Environment"]["Variables"]
        for variable in (
            "GB_SECRETS_ARN",
            "GB_DB_APP_SECRET_ARN",
            "GB_DB_HOST",
            "GB_DB_NAME",
            "GB_LLM_MODEL",
            "GB_EMBEDDING_MODEL",
            "GB_EMBEDDING_DIMENSIONS",
            "GB_GEO",
        ):
            assert variable in env, (name, variable)
        assert env["POWERTOOLS_SERVICE_NAME"] == "gligabao"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "gligabao"
        assert env["GB_DB_HOST"] == {
            "Fn::If": [
                "UseProxy",
                {"Fn::GetAtt": ["DatabaseProxy", "Endpoint"]},
                {"Fn::GetAtt": ["DatabaseCluster", "Endpoint.Address"]},
            ]
        }
        assert env["GB_DB_CA"] == {"Fn::If": ["UseProxy", "public", "rds"]}


def test_only_the_migrate_function_can_connect_as_the_tables_owner(template):
    """Every other function connects as gligabao_app (row-level security) and may read only its secret."""
    for name, props in _functions(template).items():
        env = props["Environment"]["Variables"]
        assert env["GB_DB_APP_SECRET_ARN"] == {"Ref": "DatabaseAppSecret"}, name
        assert ("GB_DB_SECRET_ARN" in env) == (name == "MigrateFunction"), name
    for role, statement in _statements(template):
        resources = _as_list(statement["Resource"])
        if {"Ref": "DatabaseSecret"} in resources:
            assert role in ("MigrateFunctionRole", "DatabaseProxyRole"), role
    proxy_secrets = [
        auth["SecretArn"] for auth in template["Resources"]["DatabaseProxy"]["Properties"]["Auth"]
    ]
    assert {"Ref": "DatabaseAppSecret"} in proxy_secrets
    app_secret = template["Resources"]["DatabaseAppSecret"]["Properties"]["GenerateSecretString"]
    assert '"username": "gligabao_app"' in app_secret["SecretStringTemplate"]


def test_no_secretsmanager_statement_on_every_resource(template):
    seen = 0
    for role, statement in _statements(template):
        actions = _as_list(statement["Action"])
        if any(a.lower().startswith("secretsmanager:") for a in actions):
            seen += 1
            resources = _as_list(statement["Resource"])
            assert "*" not in resources, role
            assert all(isinstance(r, dict) for r in resources), (role, resources)
            if role == "MigrateFunctionRole" and resources == [{"Ref": "DatabaseAppSecret"}]:
                continue  # the rotation of the service role's secret, that secret only
            assert all(a == "secretsmanager:GetSecretValue" for a in actions), role
    assert seen >= 3


def test_wildcard_resources_only_for_actions_that_take_no_narrower_one(template):
    """The ENI actions of VpcConfig, X-Ray's writes, the network check's EC2 reads."""
    allowed = {
        "ec2:CreateNetworkInterface",
        "ec2:DescribeNetworkInterfaces",
        "ec2:DescribeSubnets",
        "ec2:DeleteNetworkInterface",
        "ec2:AssignPrivateIpAddresses",
        "ec2:UnassignPrivateIpAddresses",
        "ec2:DescribeRouteTables",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }
    for role, statement in _statements(template):
        if "*" in _as_list(statement["Resource"]):
            assert set(_as_list(statement["Action"])) <= allowed, role


def test_aurora_postgresql_17_serverless_v2_behind_a_tls_proxy(template):
    cluster = template["Resources"]["DatabaseCluster"]["Properties"]
    assert cluster["Engine"] == "aurora-postgresql"
    assert str(cluster["EngineVersion"]).startswith("17")
    assert cluster["StorageEncrypted"] is True
    assert "ServerlessV2ScalingConfiguration" in cluster
    instance = template["Resources"]["DatabaseInstance"]["Properties"]
    assert instance["DBInstanceClass"] == "db.serverless"
    proxy = template["Resources"]["DatabaseProxy"]["Properties"]
    assert proxy["EngineFamily"] == "POSTGRESQL"
    assert proxy["RequireTLS"] is True


def test_the_migrations_run_at_deploy_time(template):
    migrations = _resources(template, "Custom::Migrations")
    assert len(migrations) == 1
    resource = next(iter(migrations.values()))
    assert resource["Properties"]["ServiceToken"] == {"Fn::GetAtt": ["MigrateFunction", "Arn"]}
    assert resource["Properties"]["LayerVersion"] == {"Ref": "CoreLayer"}
    assert {"DatabaseInstance", "DatabaseTargetsReady"} <= set(_as_list(resource["DependsOn"]))
    ready = template["Resources"]["DatabaseTargetsReady"]["Metadata"]
    assert ready == {
        "ProxyTargetGroup": {"Fn::If": ["UseProxy", {"Ref": "DatabaseProxyTargetGroup"}, "none"]}
    }


def test_outputs(template):
    assert {"ApiUrl", "ProviderKeysSecretArn"} <= set(template["Outputs"])


# --- authentication: the AuthMode parameter chooses every route's authorization

SIGV4_SCHEME = {
    "type": "apiKey",
    "name": "Authorization",
    "in": "header",
    "x-amazon-apigateway-authtype": "awsSigv4",
}
JWT_SCHEME = {
    "type": "oauth2",
    "x-amazon-apigateway-authorizer": {
        "type": "jwt",
        "identitySource": "$request.header.Authorization",
        "jwtConfiguration": {"issuer": {"Ref": "JwtIssuer"}, "audience": {"Ref": "JwtAudience"}},
    },
}
NO_VALUE = object()


def _resolved(value, template: dict, parameters: dict):
    """The value CloudFormation sees for these parameters: Fn::If on the template's conditions
    (Fn::Equals of a parameter and a string), AWS::NoValue removed."""
    if isinstance(value, dict):
        if set(value) == {"Fn::If"}:
            condition, when_true, when_false = value["Fn::If"]
            holds = _condition(template["Conditions"][condition], parameters)
            return _resolved(when_true if holds else when_false, template, parameters)
        if value == {"Ref": "AWS::NoValue"}:
            return NO_VALUE
        items = ((key, _resolved(item, template, parameters)) for key, item in value.items())
        return {key: item for key, item in items if item is not NO_VALUE}
    if isinstance(value, list):
        items = (_resolved(item, template, parameters) for item in value)
        return [item for item in items if item is not NO_VALUE]
    return value


def _condition(condition: dict, parameters: dict) -> bool:
    left, right = condition["Fn::Equals"]
    return parameters[left["Ref"]] == right


def _api_body(template: dict, mode: str) -> dict:
    api = template["Resources"]["HttpApi"]["Properties"]
    return _resolved(api["DefinitionBody"], template, {"AuthMode": mode})


def _route_security(body: dict) -> dict[tuple[str, str], object]:
    """(path, method) -> the route's security (None: open), as the events name them."""
    methods = {"x-amazon-apigateway-any-method": "ANY"}
    return {
        (path, methods.get(method, method.upper())): operation.get("security")
        for path, operations in body["paths"].items()
        for method, operation in operations.items()
    }


def _event_routes(template: dict) -> set[tuple[str, str]]:
    return {
        (event["Properties"]["Path"], event["Properties"]["Method"])
        for props in _functions(template).values()
        for event in props.get("Events", {}).values()
        if event["Type"] == "HttpApi"
    }


def test_auth_mode_on_aws_is_iam_or_jwt_and_iam_by_default(template):
    """The local API's `none` authenticates nothing: an API on the internet never offers it."""
    parameter = template["Parameters"]["AuthMode"]

    assert parameter["AllowedValues"] == ["iam", "jwt"]
    assert parameter["Default"] == "iam"
    assert template["Parameters"]["JwtAudience"]["Type"] == "CommaDelimitedList"


@pytest.mark.parametrize("mode", ["iam", "jwt"])
def test_every_route_s_authorization_is_written_for_every_mode(template, mode):
    assert set(_route_security(_api_body(template, mode))) == _event_routes(template)


def test_iam_mode_signs_every_route_with_sigv4(template):
    body = _api_body(template, "iam")

    assert set(map(str, _route_security(body).values())) == {str([{"AWS_IAM": []}])}
    assert body["components"]["securitySchemes"] == {"AWS_IAM": SIGV4_SCHEME}


def test_jwt_mode_puts_the_jwt_authorizer_of_the_issuer_and_audience_on_every_route(template):
    body = _api_body(template, "jwt")

    assert set(map(str, _route_security(body).values())) == {str([{"JwtAuthorizer": []}])}
    assert body["components"]["securitySchemes"] == {"JwtAuthorizer": JWT_SCHEME}


def test_no_route_is_left_open_in_any_mode(template):
    for mode in template["Parameters"]["AuthMode"]["AllowedValues"]:
        assert None not in _route_security(_api_body(template, mode)).values(), mode


def test_no_sam_auth_or_route_auth_overrides_the_modes(template):
    (api,) = _resources(template, "AWS::Serverless::HttpApi").values()

    assert "Auth" not in api["Properties"]
    for function in _resources(template, "AWS::Serverless::Function").values():
        for event in (function["Properties"].get("Events") or {}).values():
            assert "Auth" not in event.get("Properties", {}), "no route opts out of the mode"


def test_the_functions_know_the_auth_mode(template):
    for name, props in _functions(template).items():
        assert props["Environment"]["Variables"]["GB_AUTH_MODE"] == {"Ref": "AuthMode"}, name


def test_jwt_mode_needs_an_issuer_and_an_audience(template):
    rule = template["Rules"]["JwtNeedsIssuerAndAudience"]

    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "AuthMode"}, "jwt"]}
    assert {"Fn::Not": [{"Fn::Equals": [{"Ref": "JwtIssuer"}, ""]}]} in [
        a["Assert"] for a in rule["Assertions"]
    ]
    assert {"Fn::Not": [{"Fn::Contains": [{"Ref": "JwtAudience"}, ""]}]} in [
        a["Assert"] for a in rule["Assertions"]
    ]


# --- geo -----------------------------------------------------------------------------------------


def test_the_location_service_permission_only_with_geo_on_and_the_aws_location_resolver(template):
    condition = template["Conditions"]["UseAwsLocation"]["Fn::And"]
    assert {"Fn::Equals": [{"Ref": "Geo"}, "on"]} in condition
    assert {"Fn::Equals": [{"Ref": "GeoResolver"}, "aws-location"]} in condition
    granted = []
    for name, resource in template["Resources"].items():
        for policy in (resource.get("Properties") or {}).get("Policies") or []:
            if "Fn::If" in policy:
                when, policy, otherwise = policy["Fn::If"]
                if "geo:" in str(policy):
                    assert (when, otherwise) == ("UseAwsLocation", {"Ref": "AWS::NoValue"})
                    granted.append(name)
                continue
            assert "geo:" not in str(policy), name
    # remember and query resolve places; so does the remember worker (asynchronous remembers)
    assert granted == ["RememberFunctionRole", "QueryFunctionRole", "RememberWorkerFunctionRole"]


def test_the_aws_location_resolver_needs_a_place_index(template):
    rule = template["Rules"]["AwsLocationNeedsPlaceIndex"]
    assert rule["Assertions"][0]["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "PlaceIndexName"}, ""]}]}


def test_the_functions_know_the_geo_settings(template):
    for name, props in _functions(template).items():
        env = props["Environment"]["Variables"]
        assert {
            key: env[key] for key in ("GB_GEO", "GB_GEO_RESOLVER", "GB_PLACE_INDEX", "GB_GEO_RADIUS_KM")
        } == {
            "GB_GEO": {"Ref": "Geo"},
            "GB_GEO_RESOLVER": {"Ref": "GeoResolver"},
            "GB_PLACE_INDEX": {"Ref": "PlaceIndexName"},
            "GB_GEO_RADIUS_KM": {"Ref": "GeoRadiusKm"},
        }, name


# --- asynchronous remember: the jobs queue, its dead-letter queue, the worker


def test_the_jobs_queue_is_fifo_with_a_dead_letter_queue_after_async_max_attempts(template):
    resources = template["Resources"]
    jobs, dead = resources["JobsQueue"]["Properties"], resources["JobsDeadLetterQueue"]["Properties"]
    assert jobs["FifoQueue"] is True and dead["FifoQueue"] is True
    assert jobs["ContentBasedDeduplication"] is False  # the artifact's id deduplicates
    assert jobs["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": ["JobsDeadLetterQueue", "Arn"]},
        "maxReceiveCount": {"Ref": "AsyncMaxAttempts"},
    }
    assert template["Parameters"]["AsyncMaxAttempts"]["Default"] == Limits().async_max_attempts
    worker = resources["RememberWorkerFunction"]["Properties"]
    assert jobs["VisibilityTimeout"] >= 6 * worker["Timeout"]


def test_the_worker_reports_partial_batch_failures_with_a_maximum_concurrency(template):
    """The queue's maximum concurrency caps the worker without reserving from the account's pool
    (a new account's pool of 10 has nothing to reserve)."""
    worker = template["Resources"]["RememberWorkerFunction"]["Properties"]
    [event] = worker["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["JobsQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["Properties"]["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "WorkerMaxConcurrency"}}
    assert "ReservedConcurrentExecutions" not in worker
    assert template["Parameters"]["WorkerMaxConcurrency"]["MinValue"] == 2  # SQS's least maximum
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["GB_JOBS_QUEUE_URL"] == {"Ref": "JobsQueue"}
    assert env["GB_ASYNC_MAX_ATTEMPTS"] == {"Ref": "AsyncMaxAttempts"}


def test_the_texts_a_worker_prepares_ahead_are_a_parameter_with_the_services_default_and_bounds(template):
    parameter = template["Parameters"]["AsyncPrepareAhead"]
    field = Limits.model_fields["async_prepare_ahead"]
    bounds = {type(m).__name__: m for m in field.metadata}
    assert parameter["Default"] == Limits().async_prepare_ahead
    assert (parameter["MinValue"], parameter["MaxValue"]) == (bounds["Ge"].ge, bounds["Le"].le)
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["GB_ASYNC_PREPARE_AHEAD"] == {"Ref": "AsyncPrepareAhead"}


def test_only_remember_sends_jobs_and_only_the_worker_consumes_them(template):
    actions_by_role: dict[str, set[str]] = {}
    for role, statement in _statements(template):
        if statement.get("Resource") == {"Fn::GetAtt": ["JobsQueue", "Arn"]}:
            actions_by_role.setdefault(role, set()).update(_as_list(statement["Action"]))
    assert actions_by_role == {
        "RememberFunctionRole": {"sqs:SendMessage"},
        "RememberWorkerFunctionRole": {
            "sqs:ReceiveMessage",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
            "sqs:ChangeMessageVisibility",
        },
    }


def test_an_alarm_watches_the_dead_letter_queue(template):
    alarm = template["Resources"]["JobsDeadLetterAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/SQS", "ApproximateNumberOfMessagesVisible")
    assert alarm["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["JobsDeadLetterQueue", "QueueName"]}}
    ]
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
