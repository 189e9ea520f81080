"""Health (GET /v1/gb/health) with a database that cannot be reached: not ok, without its address."""

from gligabao.db import connection
from gligabao.memory.health import health


def test_health_reports_an_unreachable_database_without_its_address(database_url, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://gb:hunter2@127.0.0.1:9/nowhere?connect_timeout=1")
    from gligabao import config

    config.reset_caches()
    connection.reset()
    try:
        state = health()["database"]
    finally:
        monkeypatch.setenv("DATABASE_URL", database_url)
        config.reset_caches()
        connection.reset()

    assert state == {"ok": False, "error": "database unavailable"}
