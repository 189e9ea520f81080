"""The embedded PostgreSQL with pgvector (the `pgserver` package) for the local API and tests.

It listens on a Unix socket only, in a data folder that survives restarts.
"""

from __future__ import annotations

import os
import warnings


def embedded_database_url(data_dir: str) -> str:
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
    return server.get_uri()
