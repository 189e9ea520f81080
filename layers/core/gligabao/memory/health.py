"""What GET /v1/gb/health reports: the database state and which providers are configured."""

from __future__ import annotations

from gligabao import __version__, config
from gligabao.db.connection import connection

PROVIDERS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def health() -> dict:
    configured = {"anthropic": config.llm_configured(), "openai": "OPENAI_API_KEY" in config.provider_keys()}
    return {
        "status": "ok",
        "version": __version__,
        "database": database_state(),
        "providers": {name: {"configured": ok} for name, ok in configured.items()},
        "missing": [PROVIDERS[name] for name, ok in configured.items() if not ok],
    }


def database_state() -> dict:
    try:
        row = connection().execute("SELECT max(version) AS version FROM gb_schema_migrations").fetchone()
    except Exception as exc:  # any failure is a state to report, not an error of the endpoint
        return {"ok": False, "error": _short_reason(exc)}
    return {"ok": True, "schema_version": row["version"]}


def _short_reason(exc: Exception) -> str:
    # Connection errors can carry the DSN; only the kind of failure is reported.
    if type(exc).__name__ == "UndefinedTable":
        return "schema not applied (run `gligabao migrate`)"
    return "database unavailable"
