"""What GET /v1/gb/health reports: the database state and which providers are configured."""

from __future__ import annotations

from dataclasses import dataclass, field

from gligabao import __version__
from gligabao.db.connection import Database

PROVIDERS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


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
        return [PROVIDERS[name] for name, ok in self.configured.items() if not ok]


def health(database: Database, *, llm_configured: bool, embeddings_configured: bool) -> Health:
    return Health(
        version=__version__,
        database=database_state(database),
        configured={"anthropic": llm_configured, "openai": embeddings_configured},
    )


def database_state(database: Database) -> DatabaseState:
    """Reads the schema version on this container's connection, reconnecting when it was lost."""
    try:
        row = (
            database.connection()
            .execute("SELECT max(version) AS version FROM gb_schema_migrations")
            .fetchone()
        )
    except Exception as exc:  # any failure is a state to report, not an error of the endpoint
        return DatabaseState(ok=False, error=_short_reason(exc))
    return DatabaseState(ok=True, schema_version=row["version"])


def _short_reason(exc: Exception) -> str:
    # Connection errors can carry the DSN; only the kind of failure is reported.
    if type(exc).__name__ == "UndefinedTable":
        return "schema not applied (run `gligabao migrate`)"
    return "database unavailable"
