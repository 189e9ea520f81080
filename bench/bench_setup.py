"""What the benches share: the server their databases live on, a scratch database with the schema,
the settings that point the service at the fake providers, and the local API in this process."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def provider_settings(anthropic, openai) -> dict[str, str]:
    """The settings that point the service at the fake providers (keys of their own, never real)."""
    return {
        "anthropic_api_key": "sk-ant-bench",
        "anthropic_base_url": anthropic.url,
        "openai_api_key": "sk-bench",
        "openai_base_url": f"{openai.url}/v1",
    }


def bench_admin_url(data_dir: str = str(ROOT / "var" / "bench-pgdata")) -> str:
    """The server the benches make their databases on: DATABASE_URL's, else the embedded PostgreSQL
    in `data_dir` (started when it is not running)."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from gligabao.local.embedded_pg import embedded_database_url

    return embedded_database_url(data_dir)


class scratch_database:
    """A database of its own for the bench, with the schema, dropped at the end."""

    def __init__(self, admin_url: str, overrides: dict[str, object]):
        self.admin_url = admin_url
        self.overrides = overrides  # of the service's Settings: the fake providers, the vector size
        self.name = f"gligabao_bench_{os.getpid()}"

    def __enter__(self):
        import psycopg
        from psycopg import sql
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.name)))
        params = conninfo_to_dict(self.admin_url)
        params["dbname"] = self.name
        from gligabao import bootstrap
        from gligabao.db.migrate import APP_ROLE, migrate, set_role_password
        from gligabao.settings import Settings

        # Migrated as the owner; the remembers run as the service does, as gligabao_app (row-level security).
        settings = Settings(**self.overrides)
        self.owner_url = make_conninfo(**params)
        with psycopg.connect(self.owner_url, autocommit=True) as conn:
            migrate(conn, settings.embedding_dimensions)
            params["user"] = APP_ROLE
            if params.get("password"):
                params["password"] = os.urandom(16).hex()
                set_role_password(conn, params["password"])
        settings = Settings(database_url=make_conninfo(**params), **self.overrides)
        self.bundle = bootstrap.Bundle(settings)
        bootstrap.install(self.bundle)
        return self

    def __exit__(self, *exc):
        import psycopg
        from psycopg import sql

        self.bundle.database.close()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name)))


@contextlib.contextmanager
def local_api(containers=None) -> Iterator[tuple[int, object]]:
    """The local API on a free loopback port of this process; the functions in-process, or in
    `containers`."""
    from gligabao.local.server import make_server

    server = make_server(ROOT / "template.yaml", port=0, quiet=True, containers=containers)
    thread = threading.Thread(target=server.serve_forever, name="local-api", daemon=True)
    thread.start()
    try:
        yield server.server_address[1], server.RequestHandlerClass.api
    finally:
        server.shutdown()
        server.server_close()
        server.RequestHandlerClass.api.containers.close()
