"""`sam local invoke` and `sam local start-api --env-vars env.json` work as the README says: SAM's
own classes resolve every function's environment from template.yaml and the shipped env.json,
and the service configured by that environment uses DATABASE_URL and the keys of env.json, never
a secret or queue of a stack that does not exist locally.

SAM lives in its own virtualenv (.venv-tools, `make tools`: it pins other boto3 and pydantic
versions), so its classes run in a subprocess of that virtualenv's Python."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from gligabao.bootstrap import database_url
from gligabao.local.template_routes import load_template
from gligabao.settings import Settings

ENV_FILE = ROOT / "env.json"


def _tools_python() -> Path | None:
    """.venv-tools of this checkout (`make tools`), else of the main worktree of a git worktree."""
    candidates = [ROOT / ".venv-tools"]
    try:
        common = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        candidates.append(Path(common).parent / ".venv-tools")
    except (OSError, subprocess.CalledProcessError):
        pass
    return next((c / "bin/python" for c in candidates if (c / "bin/sam").exists()), None)


@pytest.fixture(scope="module")
def resolved(tmp_path_factory) -> dict[str, dict[str, str]]:
    python = _tools_python()
    if python is None:
        pytest.skip("the SAM CLI's virtualenv is missing: `make tools` installs it (`make test` does)")
    home = tmp_path_factory.mktemp("home")  # no AWS profile or credentials of the developer's
    result = subprocess.run(
        [str(python), str(ROOT / "tests/sam_local_env.py"), str(ROOT / "template.yaml"), str(ENV_FILE)],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "AWS_DEFAULT_REGION": "us-east-1",
            "SAM_CLI_TELEMETRY": "0",
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    every = json.loads(result.stdout)
    # The service's functions (the deploy-time network check is inline code of its own).
    resources = load_template(ROOT / "template.yaml")["Resources"]
    service = {name for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}
    assert service <= set(every)
    return {name: env for name, env in every.items() if name in service}


def test_every_function_gets_the_database_url_and_provider_settings_of_env_json(resolved):
    shipped = json.loads(ENV_FILE.read_text())["Parameters"]
    assert {"RememberFunction", "QueryFunction", "SystemFunction", "MigrateFunction"} <= set(resolved)
    for name, env in resolved.items():
        for variable in (
            "DATABASE_URL",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
        ):
            assert env[variable] == shipped[variable], (name, variable)


def test_no_function_points_at_a_secret_or_queue_of_the_deployed_stack(resolved):
    # Without env.json SAM resolves a !Ref to the logical id ("ProviderKeysSecret"), which the
    # service would take for a secret to read.
    for name, env in resolved.items():
        for variable in (
            "GB_SECRETS_ARN",
            "GB_DB_APP_SECRET_ARN",
            "GB_DB_SECRET_ARN",
            "GB_DB_HOST",
            "GB_JOBS_QUEUE_URL",
        ):
            assert env.get(variable, "") == "", (name, variable, env.get(variable))


def test_the_resolved_environment_configures_the_service_on_database_url(resolved):
    shipped = json.loads(ENV_FILE.read_text())["Parameters"]
    for name, env in resolved.items():
        settings = Settings.from_env(
            {**env, "ANTHROPIC_API_KEY": "sk-ant-local", "OPENAI_API_KEY": "sk-local"}
        )

        assert database_url(settings) == shipped["DATABASE_URL"], name
        assert database_url(settings, admin=True) == shipped["DATABASE_URL"], name
        assert not settings.behind_rds_proxy and settings.secrets_arn is None, name
        assert settings.anthropic_api_key.get_secret_value() == "sk-ant-local", name
