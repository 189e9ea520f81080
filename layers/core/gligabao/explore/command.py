"""`gligabao explore [--api URL] [--port P]`: the memory explorer on localhost."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gligabao.limits import EXPLORER_DEFAULT_PORT

DEFAULT_API = "http://127.0.0.1:7878"  # what `make serve` listens on


def add_explore_command(commands) -> None:
    explore = commands.add_parser(
        "explore",
        help="serve the memory explorer (a page that draws the graph, its history and its sources) on localhost",
    )
    explore.add_argument("--api", default=DEFAULT_API, help=f"the API's base URL (default {DEFAULT_API})")
    explore.add_argument("--port", type=int, default=EXPLORER_DEFAULT_PORT, help="the explorer's port")
    explore.add_argument("--host", default="127.0.0.1", help="the explorer's address (keep it local)")
    explore.add_argument(
        "--sign",
        choices=["auto", "sigv4", "none"],
        default="auto",
        help="sign the API's calls with SigV4 (the AWS credentials of this shell); auto: for an "
        "execute-api URL only",
    )
    explore.add_argument(
        "--region", default=None, help="with --sign sigv4: the API's region (else the URL's)"
    )
    explore.add_argument("--profile", default=None, help="with --sign sigv4: the AWS profile to sign with")
    explore.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help="for a JWT-authorized API: a file holding the bearer token (read again for every call)",
    )


def explore(args: argparse.Namespace) -> int:
    from gligabao.explore.server import make_server
    from gligabao.explore.signing import SigningUnavailable, bearer_signer, sigv4_signer, wants_signing

    signer, how = None, "unsigned"
    try:
        if args.token_file:
            signer, how = bearer_signer(args.token_file), "with the bearer token of " + str(args.token_file)
        elif args.sign == "sigv4" or (args.sign == "auto" and wants_signing(args.api)):
            signer, how = sigv4_signer(args.api, region=args.region, profile=args.profile), "SigV4-signed"
    except SigningUnavailable as error:
        print(f"gligabao explore: {error}", file=sys.stderr)
        return 2
    try:
        server = make_server(args.api, args.host, args.port, signer)
    except OSError as error:
        print(f"gligabao explore: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"gligabao explorer on http://{shown}:{port}/ (API {args.api}, {how})",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
