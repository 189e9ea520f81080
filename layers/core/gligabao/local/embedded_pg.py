"""The embedded PostgreSQL with pgvector (the `pgserver` package) for the local API and tests.

It listens on a Unix socket only, in a data folder that survives restarts.
"""

from __future__ import annotations

import os
import warnings


def embedded_database_url(data_dir: str, user: str | None = None) -> str:
    """The URL of the embedded PostgreSQL in `data_dir` (started when it is not running): as its
    superuser, or as `user` (trusted on the Unix socket, no password)."""
    try:
        import pgserver
    except ImportError as exc:  # the Lambda layer does not ship it
        raise RuntimeError(
            "DATABASE_URL is not set and the embedded PostgreSQL (pgserver) is not installed"
        ) from exc
    os.makedirs(data_dir, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # cleanup_mode=None keeps the server running for the next process (tests, a restarted serve).
        server = pgserver.get_server(data_dir, cleanup_mode=None)
    url = server.get_uri()
    if user is None:
        return url
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "user": user, "password": None})
