"""The `gligabao` command line: its version, every option's default in its help, one wording of how
the commands that call the API pick their authentication, a token never taken as a flag, and
`serve`'s authentication saying what the local API checks."""

from __future__ import annotations

import argparse
import re
import tomllib
from types import SimpleNamespace

import pytest
from conftest import ROOT

from gligabao import bootstrap
from gligabao.bootstrap import Bundle
from gligabao.client.options import AUTH_HELP, AUTH_PRECEDENCE, DefaultsShown
from gligabao.evals.cli import convert_parser, run_parser
from gligabao.evals.cli import main as eval_main
from gligabao.local.cli import _with_auth_options, build_parser, main
from gligabao.settings import Settings


def subcommands() -> dict[str, argparse.ArgumentParser]:
    [choices] = [a.choices for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {**choices, "eval": run_parser(), "eval convert": convert_parser()}


def shown_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._get_help_string(action) % {**vars(action), "prog": parser.prog}


def test_version_is_the_packages(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"gligabao {project['version']}\n"


@pytest.mark.parametrize("command", ["serve", "mcp", "explore", "import", "eval", "eval convert"])
def test_every_option_s_help_shows_its_default(command):
    parser = subcommands()[command]
    assert parser.formatter_class is DefaultsShown
    options = [
        action
        for action in parser._actions
        if action.option_strings
        and action.help is not argparse.SUPPRESS
        and not action.required
        and not isinstance(action, argparse._HelpAction | argparse._StoreTrueAction)
    ]

    assert options
    assert [a.dest for a in options if "default" not in shown_help(parser, a)] == []


def test_a_default_value_is_shown_as_it_is():
    serve = subcommands()["serve"]
    workers = next(a for a in serve._actions if a.dest == "workers")

    assert shown_help(serve, workers).endswith(f"(default: {workers.default})")


def test_the_commands_that_call_the_api_word_their_authentication_one_way():
    for command in ("mcp", "explore", "import", "eval"):
        [auth] = [a for a in subcommands()[command]._actions if a.dest == "auth"]
        assert auth.help == AUTH_HELP, command
    assert AUTH_PRECEDENCE in AUTH_HELP
    for page in ("docs/mcp.md", "docs/explorer.md", "docs/evals.md"):
        text = " ".join((ROOT / page).read_text().split()).replace("`", "")
        assert AUTH_PRECEDENCE in text, page


def test_eval_s_usage_lists_convert():
    assert "gligabao eval convert {locomo,longmemeval} SOURCE TARGET" in run_parser().format_usage()


def test_eval_refuses_a_token_flag_without_echoing_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        eval_main([str(tmp_path / "s.jsonl"), "--api", "http://x", "--token", "secret-123"])

    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert "a token is never a flag" in err and "GB_API_TOKEN" in err
    assert "secret-123" not in err
    assert not (tmp_path / "eval-runs").exists()


def test_no_option_takes_a_token():
    for command, parser in subcommands().items():
        shown = [o for a in parser._actions if a.help is not argparse.SUPPRESS for o in a.option_strings]
        assert not [option for option in shown if "token" in option], command


def serve_args(auth: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(auth=auth, jwt_issuer=None, jwt_audience=None, jwks=None)


def test_serve_without_auth_says_none_which_is_what_the_local_api_checks():
    served = _with_auth_options(bootstrap.bundle(), serve_args())

    assert served.settings.auth_mode == "none"
    assert build_parser().parse_args(["serve"]).host == "127.0.0.1"


def test_serve_keeps_the_environment_s_auth_mode_and_the_flag_s():
    from_env = Bundle(Settings.from_env({"GB_AUTH_MODE": "iam", "DATABASE_URL": "postgresql:///x"}))

    assert _with_auth_options(from_env, serve_args()).settings.auth_mode == "iam"
    assert _with_auth_options(from_env, serve_args("jwt")).settings.auth_mode == "jwt"


def command_lines() -> list[tuple[str, str]]:
    """Every `gligabao <command> ...` line of the README's and the docs' shell blocks."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", page.read_text(), flags=re.S)
        for line in (line.split("#")[0] for block in blocks for line in block.splitlines()):
            if re.search(r"(^|[\s/])gligabao (serve|migrate|openapi|mcp|explore|eval)\b", line):
                found.append((page.name, line))
    return found


def test_the_command_lines_of_the_readme_and_the_docs_match_the_help():
    lines = command_lines()
    parsers = subcommands()
    options = {
        name: {o for a in p._actions if a.help is not argparse.SUPPRESS for o in a.option_strings}
        for name, p in parsers.items()
    }

    unknown = []
    for page, line in lines:
        command = re.search(r"gligabao (eval convert|serve|migrate|openapi|mcp|explore|eval)\b", line)[1]
        unknown += [
            (page, command, flag) for flag in re.findall(r"--[a-z-]+", line) if flag not in options[command]
        ]

    assert len(lines) >= 10
    assert unknown == []
