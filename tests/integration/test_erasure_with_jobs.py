"""Erasure is final, even with the user's jobs in flight: a batch of the user's texts is queued and the
worker runs it (windows, texts extracted ahead, the fake providers answering in 50 ms), and the user
is erased while its jobs are queued, extracting, resolving or storing. After the erasure returns, no
model call is made for them, and no gb_ table (every one, read from the catalog) holds a row."""

from __future__ import annotations

import threading
import time

import pytest
from bulk_helpers import send_batches
from fakes.anthropic_server import Reply
from job_helpers import pump
from remember_helpers import rule_based_model, stage_of

LATENCY_S = 0.05
TEXTS = [
    {"text": f"Person{i} lives in City{i % 4}.", "reference_time": f"2024-01-{1 + i:02d}T00:00:00Z"}
    for i in range(20)
]


def gb_tables_with_rows(db) -> dict[str, int]:
    tables = [
        name
        for (name,) in db.execute(
            """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname LIKE 'gb\\_%'
                 AND c.relname NOT IN ('gb_schema_migrations', 'gb_embedding_space')"""
        ).fetchall()
    ]
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    return {t: n for t, n in counts.items() if n}


class Erasing:
    """Erases u1 from another thread when `trigger(stage, count)` says so, and records when every model
    request arrived and when the erasure returned."""

    def __init__(self, trigger):
        self.trigger = trigger
        self.seen: dict[str, int] = {}
        self.arrivals: list[float] = []
        self.stages: list[str] = []
        self.done_at: float | None = None
        self.receipt = None
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def request(self, stage: str) -> None:
        with self.lock:
            self.arrivals.append(time.monotonic())
            self.stages.append(stage)
            self.seen[stage] = self.seen.get(stage, 0) + 1
            if self.thread is None and self.trigger(stage, self.seen[stage]):
                self.start()

    def start(self) -> None:
        self.thread = threading.Thread(target=self._erase)
        self.thread.start()

    def _erase(self) -> None:
        from gligabao import bootstrap
        from gligabao.memory.erasure import erase_user

        self.receipt = erase_user(bootstrap.bundle(), "u1")
        self.done_at = time.monotonic()

    def calls_after(self) -> list[str]:
        """The stages of the model calls that arrived after the erasure returned."""
        assert self.done_at is not None, "the erasure never ran"
        return [
            stage for stage, arrival in zip(self.stages, self.arrivals, strict=True) if arrival > self.done_at
        ]


@pytest.mark.parametrize(
    ("moment", "trigger"),
    [
        ("extracting", lambda stage, n: stage == "extract" and n == 3),
        ("resolving", lambda stage, n: stage == "resolve" and n == 1),
        ("a later window extracting", lambda stage, n: stage == "extract" and n == 12),
    ],
)
def test_an_erasure_while_the_users_jobs_run_is_final(db, models, sqs_jobs, monkeypatch, moment, trigger):
    from conftest import reconfigure

    from gligabao import bootstrap

    fake_anthropic, fake_openai = models
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"bulk_window_texts": 5}))
    erasing = Erasing(trigger)

    def slow_model(body):
        erasing.request(stage_of(body))
        return Reply(data=rule_based_model(body), delay_s=LATENCY_S)

    fake_anthropic.responder = slow_model
    recorded = fake_openai.record

    def record_embeddings(request):
        erasing.request("embed")
        recorded(request)

    monkeypatch.setattr(fake_openai, "record", record_embeddings)
    send_batches(TEXTS, "main")

    pump(sqs_jobs, rounds=200)
    erasing.thread.join(timeout=30)

    assert erasing.calls_after() == [], moment
    assert gb_tables_with_rows(db) == {}, moment
    assert erasing.receipt.jobs_cancelled > 0 and erasing.receipt.rows["gb_datasets"] == 1


def test_an_erasure_while_a_window_stores_waits_for_it_and_erases_what_it_stored(
    db, models, sqs_jobs, monkeypatch
):
    from gligabao import bootstrap
    from gligabao.db import graph_writes
    from gligabao.memory.erasure import erase_user

    fake_anthropic, _ = models
    fake_anthropic.responder = rule_based_model
    erased: list = []
    read = graph_writes.send_match_and_history

    def erase_during_the_store(*args, **kwargs):
        if not erased:  # the first store: erase from another thread, which waits for the dataset's lock
            thread = threading.Thread(target=lambda: erased.append(erase_user(bootstrap.bundle(), "u1")))
            thread.start()
            erased.append(thread)
            time.sleep(0.2)  # the erasure is waiting on the lock this store holds
        return read(*args, **kwargs)

    monkeypatch.setattr(graph_writes, "send_match_and_history", erase_during_the_store)
    send_batches(TEXTS, "main")

    pump(sqs_jobs, rounds=200)
    erased[0].join(timeout=30)

    receipt = erased[1]
    assert receipt.rows["gb_edges"] > 0  # what the store committed first was erased with the rest
    assert gb_tables_with_rows(db) == {}


def test_erasing_a_user_with_queued_jobs_makes_no_model_call_for_them(db, models, sqs_jobs):
    from gligabao import bootstrap
    from gligabao.memory.erasure import erase_user

    fake_anthropic, fake_openai = models
    send_batches(TEXTS, "main")

    receipt = erase_user(bootstrap.bundle(), "u1")
    pump(sqs_jobs, rounds=200)

    assert receipt.jobs_cancelled == len(TEXTS)
    assert fake_anthropic.messages == [] and fake_openai.requests == []
    assert gb_tables_with_rows(db) == {}


def test_the_guard_of_a_model_call_costs_two_round_trips_and_refuses_once_the_text_is_gone(db):
    from graph_rows import add_artifact, add_dataset
    from sql_counting import counting_round_trips

    from gligabao import bootstrap
    from gligabao.memory.job_guard import guard_of
    from gligabao.observability.inferences import CallCancelled

    artifact = add_artifact(db, add_dataset(db, "u1"))
    db.execute("UPDATE gb_artifacts SET status = 'pending' WHERE id = %s", [artifact])
    guard = guard_of(bootstrap.bundle(), "u1", artifact)
    with guard.held():  # the connection opened, trusted from now on
        pass

    with counting_round_trips(this_thread_only=True) as sql, guard.held():
        pass

    assert sql.count == 2, sql.statements  # BEGIN with the check, then the COMMIT after the attempt
    db.execute("DELETE FROM gb_artifacts WHERE id = %s", [artifact])
    with pytest.raises(CallCancelled), guard.held():
        pytest.fail("the attempt ran for a text that is gone")
