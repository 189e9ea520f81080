"""Health (GET /v1/gb/health) with a database that cannot be reached: not ok, without its address."""

from gligabao.db.connection import Database
from gligabao.memory.health import database_state


def test_health_reports_an_unreachable_database_without_its_address():
    unreachable = Database(lambda: "postgresql://gb:hunter2@127.0.0.1:9/nowhere?connect_timeout=1")

    state = database_state(unreachable)

    assert (state.ok, state.error) == (False, "database unavailable")
    assert "hunter2" not in repr(state)
