"""`gligabao eval` refuses what it cannot run with a clear message and exit status 2, before it
makes its out folder or sends anything."""

from __future__ import annotations

import json

from gligabao.evals.cli import EXIT_USAGE, main

QUESTION = {"type": "question", "id": "q1", "question": "Where does Alice work?", "answer": "Acme"}


def suite(tmp_path, *items) -> str:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return str(path)


def test_a_wrong_suite_is_refused_naming_its_line(tmp_path, capsys):
    args = [suite(tmp_path, QUESTION, {**QUESTION, "id": "q2", "answer": None}), "--api", "http://x"]

    assert main([*args, "--out", str(tmp_path / "out")]) == EXIT_USAGE

    assert 'suite.jsonl:2: a question needs an "answer"' in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_without_a_provider_key_the_judge_is_not_configured_and_nothing_runs(tmp_path, capsys):
    # The bundle of the unit tests has no provider key.
    args = [suite(tmp_path, QUESTION), "--api", "http://x", "--out", str(tmp_path / "out")]

    assert main(args) == EXIT_USAGE

    assert "gligabao eval: LLM not configured: ANTHROPIC_API_KEY is not set" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_jwt_api_needs_a_token(tmp_path, capsys):
    args = [suite(tmp_path, QUESTION), "--api", "https://api.example.com", "--auth", "jwt"]

    assert main([*args, "--out", str(tmp_path / "out")], judge=lambda *a, **k: None) == EXIT_USAGE

    assert "--auth jwt needs the bearer token in GB_API_TOKEN" in capsys.readouterr().err


def test_a_concurrency_below_one_is_refused(tmp_path, capsys):
    assert main([suite(tmp_path, QUESTION), "--api", "http://x", "--concurrency", "0"]) == EXIT_USAGE
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_the_token_defaults_to_the_commands_api_token(tmp_path):
    from pydantic import SecretStr

    from gligabao import bootstrap
    from gligabao.bootstrap import Bundle
    from gligabao.evals.cli import _api, run_parser

    settings = bootstrap.bundle().settings.model_copy(update={"mcp_api_token": SecretStr("from-env")})
    bootstrap.install(Bundle(settings))
    args = run_parser().parse_args(
        [suite(tmp_path, QUESTION), "--api", "https://api.example.com", "--auth", "jwt"]
    )

    auth = _api(args).memory._http.auth

    assert auth._token == "from-env"
