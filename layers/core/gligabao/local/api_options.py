"""The options of the commands that call the API as a client (`gligabao mcp`, `gligabao explore`):
the API's URL and authentication, from the command line, else from the environment; the host
names the local servers (`gligabao serve`, `gligabao explore`) answer to, and what the servers'
commands say when they cannot listen."""

from __future__ import annotations

import argparse
import errno
import socket

from gligabao.client.options import AUTH_HELP


def add_api_arguments(parser: argparse.ArgumentParser, *, api_default: str) -> None:
    """--api and --auth, their defaults said in the help."""
    parser.add_argument(
        "--api", default=None, help=f"the API's URL (default: GB_API_URL, else {api_default})"
    )
    parser.add_argument("--auth", choices=["iam", "jwt", "none"], default=None, help=AUTH_HELP)


def add_allowed_host_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="a host name this server answers to besides localhost, 127.0.0.1, [::1] and --host "
        "(repeatable; GB_ALLOWED_HOSTS, comma-separated): needed with --host 0.0.0.0 or ::, "
        "requests for any other Host are refused (DNS rebinding) (default: GB_ALLOWED_HOSTS, else none)",
    )


def allowed_hosts(args: argparse.Namespace, settings) -> list[str]:
    """The host names a local server answers to besides this machine's: GB_ALLOWED_HOSTS, then
    each --allowed-host."""
    from gligabao.local.browser_guard import allowed_hosts as listed

    return listed(settings.allowed_hosts) + list(args.allowed_host or [])


def client_options(args: argparse.Namespace, **more):
    """ClientOptions of the command line, each missing one from the environment (GB_API_URL,
    GB_API_AUTH, GB_API_TOKEN, and GB_USER_ID and GB_DATASET for a command that takes --user-id
    and --dataset). InvalidConfiguration when the environment is wrong."""
    from gligabao.client.options import ClientOptions
    from gligabao.settings import Settings

    env = Settings.from_env()
    return ClientOptions(
        api=args.api or env.mcp_api_url,
        auth=args.auth or env.mcp_api_auth,
        token=env.mcp_api_token.get_secret_value() if env.mcp_api_token else None,
        user_id=getattr(args, "user_id", None) or env.mcp_user_id,
        dataset=getattr(args, "dataset", None) or env.mcp_dataset,
        **more,
    )


def cannot_listen(command: str, host: str, port: int, error: OSError | OverflowError) -> str:
    """The one line `gligabao COMMAND` prints (then exits 2) when it cannot listen on host:port."""
    where = f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(error, OverflowError):  # socket's own check of the port
        return f"gligabao {command}: cannot listen on {where}: a port is from 0 to 65535"
    if error.errno == errno.EADDRINUSE:
        return f"gligabao {command}: {where} is in use (another gligabao {command}? stop it or pass --port)"
    if error.errno == errno.EACCES:
        return f"gligabao {command}: no permission to listen on {where} (a port below 1024 needs root: pass --port)"
    if isinstance(error, socket.gaierror):
        return f"gligabao {command}: cannot listen on {where}: unknown host (pass --host)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"gligabao {command}: cannot listen on {where}: not an address of this machine (pass --host)"
    return f"gligabao {command}: cannot listen on {where}: {error.strerror or error}"
