"""Bulk import in windows (memory/windows.py): a batch's texts of one dataset are extracted
together, judged by one resolve call per window and stored a window per transaction, and the graph
is the one a text at a time stores."""

from __future__ import annotations

import json

from bulk_helpers import FIXED_NOW, graph_rows, history, send_batches
from fakes.anthropic_server import Reply
from job_helpers import artifact_status, pump
from remember_helpers import rule_based_model, stage_of


def with_limits(**update) -> None:
    """The bundle's limits changed, its clock fixed (so that superseded facts expire at the same
    instant whichever path stores them)."""
    from conftest import reconfigure

    from gligabao import bootstrap

    bundle = reconfigure(limits=bootstrap.bundle().limits.model_copy(update=update))
    bundle.clock = lambda: FIXED_NOW


def calls(fake_anthropic, stage: str) -> int:
    return sum(stage_of(body) == stage for body in fake_anthropic.messages)


def test_a_batch_of_200_texts_in_windows_stores_the_graph_one_text_at_a_time_stores(db, models, sqs_jobs):
    fake_anthropic, _ = models
    texts = history(200)

    with_limits(bulk_window_texts=1)
    one_ids = send_batches(texts, "one")
    pump(sqs_jobs, rounds=1000)
    one_at_a_time_calls = len(fake_anthropic.messages)
    fake_anthropic.requests.clear()

    with_limits(bulk_window_texts=20)
    window_ids = send_batches(texts, "windows")
    pump(sqs_jobs, rounds=1000)

    assert {artifact_status(db, i) for i in one_ids + window_ids} == {("done", None)}
    one, windows = graph_rows(db, "one"), graph_rows(db, "windows")
    for table in one:
        assert windows[table] == one[table], table
    superseded = [row for row in one["edges"] if row[-1] is not None]
    assert len(superseded) >= 5 * 19  # each person's chain of 20 moves: 19 superseded at least
    assert len({row[0] for row in one["entities"]} & {"Alice Chen", "Alice Park"}) == 2
    # 200 extract calls and one resolve call per window of 20, against one for each text a time
    # that states a new fact (75 here: a restatement of a stored fact asks nothing).
    assert calls(fake_anthropic, "extract") == 200
    assert calls(fake_anthropic, "resolve") == 10
    assert one_at_a_time_calls > 250


def test_a_text_a_window_cuts_for_its_reply_keeps_its_extraction_and_is_extracted_once(
    db, models, sqs_jobs, monkeypatch
):
    """A window extracts every text it takes along, then keeps those one reply can judge: the texts
    it cut keep what was extracted for them (prepared rows it read and did not store included) for
    the windows after it, so each text costs one extract call whatever the cuts."""
    from gligabao.memory import windows

    fake_anthropic, _ = models
    texts = history(60)
    with_limits(bulk_window_texts=1)
    send_batches(texts, "one")
    pump(sqs_jobs, rounds=1000)
    fake_anthropic.requests.clear()
    db.execute("DELETE FROM gb_inferences")
    monkeypatch.setattr(windows, "WINDOW_RESOLVE_MAX_TOKENS", 4 * windows.REPLY_TOKENS_PER_FACT)

    with_limits(bulk_window_texts=20)  # windows of 4 facts: each takes 19 texts along, keeps 4
    ids = send_batches(texts, "windows")
    pump(sqs_jobs, rounds=1000)

    assert {artifact_status(db, i) for i in ids} == {("done", None)}
    assert graph_rows(db, "windows") == graph_rows(db, "one")
    assert calls(fake_anthropic, "extract") == len(texts)
    embedded = db.execute("SELECT count(*) FROM gb_inferences WHERE stage = 'embed'").fetchone()[0]
    assert embedded == len(texts)
    assert db.execute("SELECT count(*) FROM gb_prepared_texts").fetchone()[0] == 0  # none outlives its text


def test_a_later_text_of_a_window_supersedes_an_earlier_one_of_the_same_window(db, models, sqs_jobs):
    fake_anthropic, _ = models
    with_limits(bulk_window_texts=20)
    moves = [
        {"text": f"Alice lives in {city}.", "reference_time": f"{2010 + i}-01-01T00:00:00Z"}
        for i, city in enumerate(["Paris", "Rome", "Oslo"])
    ]
    send_batches(list(reversed(moves)), "main")

    pump(sqs_jobs, rounds=10)

    edges = graph_rows(db, "main")["edges"]
    timeline = [(row[0], str(row[2])[:4] if row[2] else None, row[-1]) for row in edges]
    assert timeline == [
        ("Alice lives_in Oslo @2012-01-01 00:00:00+00", None, None),
        (
            "Alice lives_in Paris @2010-01-01 00:00:00+00",
            "2011",
            "Alice lives_in Rome @2011-01-01 00:00:00+00",
        ),
        (
            "Alice lives_in Rome @2011-01-01 00:00:00+00",
            "2012",
            "Alice lives_in Oslo @2012-01-01 00:00:00+00",
        ),
    ]
    assert calls(fake_anthropic, "extract") == 3
    assert calls(fake_anthropic, "resolve") == 1


CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Quito"]


def moves(cities=CITIES) -> list[dict]:
    """Alice moves to each city a year after the last, sent newest first."""
    said = [
        {
            "text": f"Alice lives in {city}.",
            "reference_time": f"{2010 + i}-01-01T00:00:00Z",
            "session_id": "a",
        }
        for i, city in enumerate(cities)
    ]
    return list(reversed(said))


def alice_timeline(db, dataset: str = "main") -> list[tuple]:
    """Where Alice lived, oldest first: the city, and the city that superseded it."""
    rows = graph_rows(db, dataset)["edges"]
    lived = sorted(rows, key=lambda row: row[0].split("@")[1])
    return [(row[0].split(" ")[2], row[-1].split(" ")[2] if row[-1] else None) for row in lived]


def failing(match: str, status: int = 502, times: int = 1, stage: str = "extract"):
    """The rule-based model, but the first `times` calls of `stage` whose prompt holds `match` fail."""
    failed = []

    def responder(body: dict):
        if stage_of(body) == stage and match in json.dumps(body["messages"]) and len(failed) < times:
            failed.append(True)
            return Reply.error(status)
        return rule_based_model(body)

    return responder, failed


def test_a_text_whose_extraction_fails_ends_the_window_before_it_and_its_own_job_retries_it(
    db, models, sqs_jobs
):
    fake_anthropic, _ = models
    with_limits(bulk_window_texts=20, provider_max_attempts=1, async_retry_backoff_s=0.0)
    fake_anthropic.responder, failed = failing("Oslo")
    ids = send_batches(moves(), "main")

    replies = pump(sqs_jobs, rounds=1)

    assert failed
    assert replies == [{"batchItemFailures": []}]  # the first job stored its window, cut before Oslo
    oldest_first = [artifact_status(db, i)[0] for i in reversed(ids)]
    assert oldest_first == ["done", "done", "pending", "pending", "pending", "pending"]

    pump(sqs_jobs, rounds=50)

    assert {artifact_status(db, i) for i in ids} == {("done", None)}
    assert alice_timeline(db) == [
        ("Paris", "Rome"),
        ("Rome", "Oslo"),
        ("Oslo", "Lima"),
        ("Lima", "Kyiv"),
        ("Kyiv", "Quito"),
        ("Quito", None),
    ]
    ok = db.execute("SELECT ok, count(*) FROM gb_inferences WHERE stage = 'extract' GROUP BY ok").fetchall()
    # Only Oslo's extracted again: the three behind it were kept as prepared for their window.
    assert dict(ok) == {True: len(CITIES), False: 1}


def test_a_window_whose_resolve_call_fails_is_retried_split_and_nothing_is_lost_or_stored_twice(
    db, models, sqs_jobs
):
    fake_anthropic, _ = models
    with_limits(bulk_window_texts=20, provider_max_attempts=1)
    fake_anthropic.responder, failed = failing("<new_facts>", stage="resolve")
    ids = send_batches(moves(), "main")

    replies = pump(sqs_jobs, rounds=1)

    assert failed and replies[0]["batchItemFailures"]  # the first job's attempt failed: redelivered
    assert artifact_status(db, ids[-1])[0] == "pending" and "retrying" in artifact_status(db, ids[-1])[1]
    assert graph_rows(db, "main")["edges"] == []  # the window stored nothing

    pump(sqs_jobs, rounds=50)  # its retry runs its text alone; the jobs behind it window again

    assert {artifact_status(db, i) for i in ids} == {("done", None)}
    assert [city for city, _ in alice_timeline(db)] == CITIES
    assert alice_timeline(db)[-1] == ("Quito", None)


def test_a_redelivered_window_stores_nothing_twice(db, models, sqs_jobs):
    fake_anthropic, _ = models
    with_limits(bulk_window_texts=20)
    send_batches(moves(), "main")
    sent = []
    original_send = sqs_jobs.sqs.receive_message

    def keeping_copies(**kwargs):  # every message delivered, to be delivered again after
        reply = original_send(**kwargs)
        sent.extend(reply.get("Messages", []))
        return reply

    sqs_jobs.sqs.receive_message = keeping_copies
    pump(sqs_jobs, rounds=50)
    sqs_jobs.sqs.receive_message = original_send
    stored, extract_calls = graph_rows(db, "main"), calls(fake_anthropic, "extract")

    for number, message in enumerate(sent):  # a worker killed after its commit: SQS delivers again
        sqs_jobs.send(message["Body"], "redelivered", f"again-{number}")
    pump(sqs_jobs, rounds=50)

    assert len(sent) == len(CITIES)
    assert graph_rows(db, "main") == stored
    assert calls(fake_anthropic, "extract") == extract_calls == len(CITIES)


def test_a_text_that_cannot_be_stored_ends_failed_with_its_reason_and_the_rest_goes_on_in_order(
    db, models, sqs_jobs
):
    from job_helpers import MAX_ATTEMPTS

    fake_anthropic, _ = models
    with_limits(bulk_window_texts=20, provider_max_attempts=1, async_retry_backoff_s=0.0)
    fake_anthropic.responder, _ = failing("Oslo", times=100)
    ids = send_batches(moves(), "main")
    oslo = ids[len(CITIES) - 1 - CITIES.index("Oslo")]  # sent newest first

    pump(sqs_jobs, rounds=50)

    status, error = artifact_status(db, oslo)
    assert status == "failed" and f"after {MAX_ATTEMPTS} attempts" in error and "502" in error
    assert {artifact_status(db, i) for i in ids if i != oslo} == {("done", None)}
    assert [city for city, _ in alice_timeline(db)] == ["Paris", "Rome", "Lima", "Kyiv", "Quito"]
    assert alice_timeline(db)[1] == ("Rome", "Lima")
    assert sqs_jobs.dead_letters()  # its message, as for any job that gave up


def test_the_jobs_events_of_windows_count_every_call_once(db, models, sqs_jobs, capsys, monkeypatch):
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    with_limits(bulk_window_texts=3)
    send_batches(moves(), "main")
    capsys.readouterr()

    pump(sqs_jobs, rounds=50)

    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    events = [d for d in docs if "_aws" in d and d.get("Operation") == "remember_job"]
    logs = [d for d in docs if str(d.get("event", "")).startswith("remember_job.")]
    assert sum(log["counts"].get("texts_stored", 0) for log in logs) == len(CITIES)  # two windows of 3
    assert sum(log["counts"].get("edges_created", 0) for log in logs) == len(CITIES)
    assert {log.get("dataset") for log in logs if log["counts"].get("texts_stored")} == {"main"}
    calls_made, tokens = db.execute("SELECT count(*), sum(input_tokens) FROM gb_inferences").fetchone()
    assert len(events) == len(CITIES)
    assert (
        calls_made == len(CITIES) * 2 + 2
    )  # an extract and an embeddings request each, a resolve per window
    assert sum(_metric(e, "ModelCalls") for e in events) == calls_made
    assert sum(_metric(e, "InputTokens") for e in events) == tokens


def _metric(doc: dict, name: str) -> float:
    value = doc.get(name, 0)
    return value[0] if isinstance(value, list) else value
