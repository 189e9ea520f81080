"""Corrections and erasure in the memory core, on the real PostgreSQL with an in-process embedder:
concurrent corrections of one fact (one wins, the others are 409s), the one embeddings request
recorded as an inference of the fact's dataset, and an erasure that row-level security keeps to
the transaction's own user."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from conftest import count_rows
from graph_rows import add_dataset, add_edge, add_entity, fill_every_table
from sql_counting import counting_round_trips

from gligabao.bootstrap import Bundle
from gligabao.db import erasure as erasure_rows
from gligabao.errors import Conflict, NotFound
from gligabao.memory.corrections import Correction, correct
from gligabao.memory.erasure import erase_user
from gligabao.observability.inferences import Inference
from gligabao.settings import Settings

NOW = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)
CALLS = 6
CORRECTION_ROUND_TRIPS = 8
END_ROUND_TRIPS = 4


class CountingEmbedder:
    """One unit vector per text; counts its requests and records each as an inference."""

    def __init__(self, dimensions: int = 1536):
        self.dimensions = dimensions
        self.requests = 0

    def embed(self, call, texts, stage="embed", *, deadline=None):
        self.requests += 1
        call.record(Inference(stage, "counting", None, len(texts), 0, None, 0.0, 0, True))
        return [[1.0] + [0.0] * (self.dimensions - 1) for _ in texts]


@pytest.fixture
def memory(database_url, test_database, db):
    return Bundle(
        Settings(database_url=database_url),
        database=test_database,
        embedder=CountingEmbedder(),
        clock=lambda: NOW,
    )


@pytest.fixture
def works_at(db) -> int:
    dataset = add_dataset(db, "u1")
    alice, acme = add_entity(db, dataset, "Alice"), add_entity(db, dataset, "Acme", "organization")
    edge = add_edge(db, dataset, alice, acme, "works_at")
    db.execute(
        "UPDATE gb_edges SET created_at = %s WHERE id = %s", [NOW - timedelta(days=1), edge]
    )  # before the clock
    return edge


def test_corrections_of_one_fact_at_the_same_moment_supersede_it_once(memory, db, works_at):
    start = threading.Barrier(CALLS)

    def run(k: int):
        start.wait()
        try:
            return correct(
                memory, Correction(user_id="u1", edge_id=works_at, description=f"Alice runs lab {k}.")
            )
        except Conflict as exc:
            return exc

    with ThreadPoolExecutor(CALLS) as pool:
        results = list(pool.map(run, range(CALLS)))

    [won] = [r for r in results if not isinstance(r, Conflict)]
    assert sum(isinstance(r, Conflict) for r in results) == CALLS - 1
    assert count_rows(db, "gb_edges") == 2
    assert db.execute("SELECT superseded_by FROM gb_edges WHERE id = %s", [works_at]).fetchone() == (
        won.edge.id,
    )
    assert count_rows(db, "gb_artifacts") == 1  # the losers stored nothing


def test_the_embeddings_request_is_an_inference_of_the_fact_s_dataset(memory, db, works_at):
    corrected = correct(memory, Correction(user_id="u1", edge_id=works_at, description="Alice leads Acme."))

    assert memory.embedder.requests == 1
    rows = db.execute("SELECT user_id, dataset_id IS NOT NULL, type, stage FROM gb_inferences").fetchall()
    assert rows == [("u1", True, "remember", "embed")]
    assert corrected.edge.valid_at is None and corrected.superseded.invalid_at == NOW


def test_another_user_cannot_correct_the_fact(memory, db, works_at):
    with pytest.raises(NotFound):
        correct(memory, Correction(user_id="u2", edge_id=works_at, description="Alice left."))
    with pytest.raises(NotFound):
        correct(memory, Correction(user_id="u2", edge_id=works_at, invalid_at=NOW))

    assert memory.embedder.requests == 0 and count_rows(db, "gb_artifacts") == 0


def test_an_erasure_in_another_user_s_transaction_deletes_nothing(memory, db):
    fill_every_table(db, rows=3)  # u1's rows in every table
    before = {
        table: count_rows(db, table)
        for table in ("gb_datasets", "gb_inferences", "gb_idempotency_records", "gb_ontologies")
    }

    with memory.database.transaction("u2") as uow:  # row-level security: u2 sees none of u1's rows
        erased = erasure_rows.erase_user(uow.conn, "u1")

    assert (erased.rows, erased.jobs_cancelled) == ({}, 0)
    assert {table: count_rows(db, table) for table in before} == before

    receipt = erase_user(memory, "u1")
    assert {table: receipt.rows[table] for table in before} == {
        "gb_datasets": 1,
        "gb_inferences": 3,
        "gb_idempotency_records": 3,
        "gb_ontologies": 3,
    }
    assert receipt.rows["gb_edges"] == 3 and receipt.rows["gb_edge_statements"] == 3
    assert count_rows(db, "gb_edges") == 0 and count_rows(db, "gb_entities") == 0


def test_a_correction_and_an_end_cost_a_few_round_trips(memory, db, works_at):
    with memory.database.transaction("u1"):
        pass  # the connection opened and its types registered before counting
    with counting_round_trips() as corrected_trips:
        corrected = correct(
            memory, Correction(user_id="u1", edge_id=works_at, description="Alice leads Acme.")
        )
    with counting_round_trips() as ended_trips:
        correct(memory, Correction(user_id="u1", edge_id=corrected.edge.id, invalid_at=NOW))

    # BEGIN, the edge (and a new target, by name or id), COMMIT; then, pipelined: BEGIN, the lock, the
    # edge again, the artifact with the facts' history, the new edge's id, the plan's writes with
    # the links, the inferences and the COMMIT.
    assert corrected_trips.count == CORRECTION_ROUND_TRIPS, [t[:60] for t in corrected_trips.statements]
    # Pipelined: BEGIN with the lock, the edge, the artifact with the fact's history, the plan's
    # writes with the links and the COMMIT.
    assert ended_trips.count == END_ROUND_TRIPS, ended_trips.statements
