"""gligabao.client.Memory's correct() and erase_user() against the local API."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import count_rows

from gligabao.api.correction_models import CorrectionResponse
from gligabao.client import BadRequestError, ConflictError, Memory, NotFoundError, Retries

FAST = Retries(max_retries=3, base_delay_s=0.01, max_delay_s=0.02)


@pytest.fixture
def memory(api):
    with Memory(api.base_url, user_id="u1", retries=FAST) as client:
        yield client


def test_correct_supersedes_a_fact_and_a_retry_with_its_key_replays_it(memory, db, models):
    [edge] = memory.remember("Alice works at Acme.").edges

    corrected = memory.correct(edge.id, target="Globex", reason="she moved", idempotency_key="fix-1")
    replayed = memory.correct(edge.id, target="Globex", reason="she moved", idempotency_key="fix-1")

    assert isinstance(corrected, CorrectionResponse)
    assert (corrected.edge.source, corrected.edge.target) == ("Alice", "Globex")
    assert [s.id for s in corrected.superseded] == [edge.id]
    assert replayed == corrected
    assert count_rows(db, "gb_edges") == 2
    with pytest.raises(ConflictError):
        memory.correct(edge.id, description="Alice runs Acme.")


def test_correct_ends_a_fact_with_invalid_at_alone(memory, db, models):
    [edge] = memory.remember("Alice works at Acme.").edges

    ended = memory.correct(edge.id, invalid_at=datetime(2030, 1, 1, tzinfo=UTC))

    assert ended.edge.id == edge.id and ended.superseded == []
    assert ended.edge.invalid_at == "2030-01-01T00:00:00Z"


def test_correct_s_errors_are_typed(memory, db, models):
    [edge] = memory.remember("Alice works at Acme.").edges

    with pytest.raises(BadRequestError, match="at least one of"):
        memory.correct(edge.id)
    with pytest.raises(NotFoundError):
        memory.for_user("u2").correct(edge.id, description="Alice left.")


def test_erase_user_erases_this_client_s_user_and_only_theirs(memory, db, models):
    memory.remember("Alice works at Acme.")
    memory.for_user("u2").remember("Bob lives in Paris.")

    receipt = memory.erase_user()
    assert receipt.rows["gb_datasets"] == 1 and receipt.rows["gb_edges"] == 1
    assert memory.erase_user().rows == {}  # again: no error, nothing left

    assert memory.datasets().datasets == []
    assert db.execute("SELECT DISTINCT user_id FROM gb_datasets").fetchall() == [("u2",)]
    memory.erase_user("u2")
    assert count_rows(db, "gb_datasets") == 0
