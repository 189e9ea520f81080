"""`gligabao explore [--api URL] [--port P]`: the memory explorer on localhost."""

from __future__ import annotations

import argparse
import sys
from urllib.parse import quote

from gligabao.client.options import DefaultsShown
from gligabao.limits import EXPLORER_DEFAULT_PORT
from gligabao.local.api_options import (
    add_allowed_host_argument,
    add_api_arguments,
    allowed_hosts,
    cannot_listen,
    client_options,
)


def add_explore_command(commands) -> None:
    explore = commands.add_parser(
        "explore",
        help="serve the memory explorer (a page that draws the graph, its history and its sources) on localhost",
        formatter_class=DefaultsShown,
    )
    add_api_arguments(explore, api_default="http://127.0.0.1:7878, `make serve`")
    explore.add_argument("--port", type=int, default=EXPLORER_DEFAULT_PORT, help="the explorer's port")
    explore.add_argument("--host", default="127.0.0.1", help="the explorer's address (keep it local)")
    add_allowed_host_argument(explore)
    explore.add_argument("--region", default=None, help="with iam: the API's region (default: the URL's)")
    explore.add_argument(
        "--user-id", default=None, help="the user the page opens on, in its URL (default: GB_USER_ID)"
    )
    explore.add_argument(
        "--dataset", default=None, help="the dataset the page opens on, in its URL (default: GB_DATASET)"
    )


def explore(args: argparse.Namespace) -> int:
    from gligabao.client.memory import LOCAL_API_URL
    from gligabao.explore.auth import AuthUnavailable, described, proxy_auth
    from gligabao.explore.server import make_server
    from gligabao.local.stop_signals import stop_on_signals
    from gligabao.settings import InvalidConfiguration, Settings

    try:
        options = client_options(args, region=args.region)
        api_url = options.api or LOCAL_API_URL
        auth = proxy_auth(api_url, options.auth, options.token, options.region)
        hosts = allowed_hosts(args, Settings.from_env())
    except (InvalidConfiguration, AuthUnavailable) as error:
        print(f"gligabao explore: {error}", file=sys.stderr)
        return 2
    try:
        server = make_server(api_url, args.host, args.port, auth, hosts)
    except (OSError, OverflowError) as error:
        print(cannot_listen("explore", args.host, args.port, error), file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    page = page_url(host, port, options.user_id, options.dataset)
    print(f"gligabao explorer on {page} (API {api_url}, {described(auth)})", flush=True)
    stop_on_signals()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def page_url(host: str, port: int, user_id: str | None = None, dataset: str | None = None) -> str:
    """The page's URL; with the user (and the dataset) the page opens on, in the query string it
    reads (`?user=...&dataset=...`, docs/explorer.md). Only the explorer's own server on this
    machine sees it, and it logs no request line."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if not user_id:
        return url
    query = f"user={quote(user_id, safe='')}"
    if dataset:
        query += f"&dataset={quote(dataset, safe='')}"
    return f"{url}?{query}"
