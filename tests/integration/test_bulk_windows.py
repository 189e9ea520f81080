"""Bulk import in windows (memory/windows.py): a batch's texts of one dataset are extracted
together, judged by one resolve call per window and stored a window per transaction, and the graph
is the one a text at a time stores."""

from __future__ import annotations

from bulk_helpers import FIXED_NOW, graph_rows, history, send_batches
from job_helpers import artifact_status, pump
from remember_helpers import stage_of


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
    # 200 extract calls and one resolve call per window of 20, against one a text at a time.
    assert calls(fake_anthropic, "extract") == 200
    assert calls(fake_anthropic, "resolve") == 10
    assert one_at_a_time_calls > 300


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
