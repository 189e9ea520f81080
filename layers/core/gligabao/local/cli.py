"""The `gligabao` command: serve (the local API), migrate, openapi."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def default_template() -> Path:
    for candidate in (Path.cwd() / "template.yaml", PACKAGE_ROOT / "template.yaml"):
        if candidate.is_file():
            return candidate
    return Path.cwd() / "template.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gligabao", description="Knowledge-graph memory for LLM agents")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="run the local API on the embedded PostgreSQL (or DATABASE_URL)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=7878)
    serve.add_argument("--template", type=Path, default=None, help="the SAM template with the routes")
    commands.add_parser("migrate", help="apply the database schema (idempotent)")
    commands.add_parser("openapi", help="print the OpenAPI document of the API")
    args = parser.parse_args(argv)
    return {"serve": _serve, "migrate": _migrate, "openapi": _openapi}[args.command](args)


def _migrate(args) -> int:
    from gligabao.bootstrap import bundle
    from gligabao.db.migrate import ensure_schema

    deps = bundle()
    applied = ensure_schema(deps.database, deps.settings.embedding_dimensions)
    print(f"applied: {', '.join(applied)}" if applied else "schema is up to date")
    return 0


def _openapi(args) -> int:
    from gligabao.api.app import openapi_document
    from gligabao.api.routes import all_routers

    json.dump(openapi_document(all_routers()), sys.stdout, indent=2)
    print()
    return 0


def _serve(args) -> int:
    from gligabao.bootstrap import bundle
    from gligabao.db.migrate import ensure_schema
    from gligabao.local.server import make_server

    deps = bundle()
    ensure_schema(deps.database, deps.settings.embedding_dimensions)
    template = args.template or default_template()
    server = make_server(template, args.host, args.port)
    host, port = server.server_address[:2]
    print(f"gligabao listening on http://{host}:{port} (routes from {template})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
