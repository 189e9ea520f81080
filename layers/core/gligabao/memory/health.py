"""What GET /v1/gb/health reports: the database state and which providers are configured."""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg

from gligabao import __version__
from gligabao.db.connection import Database

PROVIDERS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
SCHEMA_VERSION = "SELECT max(version) AS version FROM gb_schema_migrations"


@dataclass(frozen=True)
class DatabaseState:
    ok: bool
    schema_version: int | None = None
    error: str | None = None  # why the database is not usable


@dataclass(frozen=True)
class Health:
    version: str
    database: DatabaseState
    configured: dict[str, bool] = field(default_factory=dict)  # provider -> has what it needs

    @property
    def missing(self) -> list[str]:
        # offline is always configured: only a keyed provider can be missing
        return [PROVIDERS[name] for name, ok in self.configured.items() if not ok]


def health(
    database: Database,
    *,
    llm_configured: bool,
    embeddings_configured: bool,
    llm_provider: str = "anthropic",
    embedding_provider: str = "openai",
) -> Health:
    """The state of the database and of each provider the LLM and the embeddings use: one entry per
    provider (GB_LLM_PROVIDER=openai: the LLM and the embeddings are one, with one key; `offline`:
    the package's own, always configured)."""
    llm_name = llm_provider if llm_provider in ("openai", "offline") else "anthropic"
    configured = {llm_name: llm_configured}
    configured[embedding_provider] = configured.get(embedding_provider, True) and embeddings_configured
    return Health(version=__version__, database=database_state(database), configured=configured)


def database_state(database: Database) -> DatabaseState:
    """Reads the schema version on this container's connection; a connection the server dropped
    (a restart, a failover, an idle timeout) is replaced once before the database counts as down."""
    for attempt in range(2):
        try:
            row = database.connection().execute(SCHEMA_VERSION).fetchone()
        except psycopg.OperationalError as exc:
            database.close()
            if attempt:
                return DatabaseState(ok=False, error=_short_reason(exc))
        except Exception as exc:  # any failure is a state to report, not an error of the endpoint
            return DatabaseState(ok=False, error=_short_reason(exc))
        else:
            return DatabaseState(ok=True, schema_version=row["version"])
    raise AssertionError("unreachable")


def _short_reason(exc: Exception) -> str:
    # Connection errors can carry the DSN; only the kind of failure is reported.
    if type(exc).__name__ == "UndefinedTable":
        return "schema not applied (run `gligabao migrate`)"
    return "database unavailable"
