"""The reference bench's loop and report in small (bench/reference.py; the real one is `make
bench-reference`, which needs the reference's binary): our local API stands in for both servers,
so that the rotation, the checks of each reply and the printed table keep working."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import overhead
import reference

RUNS = 3


def test_each_server_is_asked_in_turn_and_reported_beside_the_reference(
    db, fake_anthropic, fake_openai, capsys
):
    model = reference.BothModels()
    fake_anthropic.responder = model
    with overhead.local_api() as (port, _), reference.embedding_waits_noted():
        ours = reference.Contestant(reference.OURS, reference.JsonClient(port))
        stand_in = reference.Contestant(reference.REFERENCE, reference.JsonClient(port))
        reference.remember_small_graph([ours])
        figures = reference.run_interleaved([ours, stand_in], RUNS, warm_up=1, model=model)
    reference.print_report(figures, [reference.OURS, reference.REFERENCE], RUNS)

    assert set(figures) == {
        (call, name) for call in ("query", "remember") for name in (reference.OURS, reference.REFERENCE)
    } | {(reference.CONTEXT, reference.OURS)}
    for (call, _), measured in figures.items():
        assert len(measured.samples) == RUNS and all(s.ms > 0 for s in measured.samples)
        assert all(s.correct for s in measured.samples)  # the asked fact answered; 10 facts stored
        if call in ("query", reference.CONTEXT):
            assert all(s.in_context for s in measured.samples)
    ours_waits = [s.embedding_wait_ms for s in figures[("query", reference.OURS)].samples]
    assert all(wait is not None and wait >= 0 for wait in ours_waits)  # both stand-ins are ours, in-process
    printed = capsys.readouterr().out
    assert f"asked fact in context {RUNS}/{RUNS}, in answer {RUNS}/{RUNS}" in printed
    assert f"10 facts stored {RUNS}/{RUNS}" in printed
    assert "the retrieval waited" in printed and "for the question's embedding" in printed
    rows = [
        line.split() for line in printed.splitlines() if line.startswith(("query ", "context ", "remember "))
    ]
    assert [(row[0], row[1]) for row in rows] == [
        ("query", "ours"),
        ("query", "reference"),
        ("context", "ours"),
        ("remember", "ours"),
        ("remember", "reference"),
    ]


def test_the_fakes_answer_as_late_as_the_latencies_say(db, fake_anthropic, fake_openai, capsys):
    """--llm-latency-ms / --embeddings-latency-ms: a query waits for both, its retrieval for the
    embedding (the keyword statement runs meanwhile); context() for the embedding alone."""
    model = reference.BothModels()
    fake_anthropic.responder = model
    with overhead.local_api() as (port, _), reference.embedding_waits_noted():
        ours = reference.Contestant(reference.OURS, reference.JsonClient(port))
        reference.remember_small_graph([ours])
        fake_anthropic.latency_s, fake_openai.latency_s = 0.3, 0.1
        figures = reference.run_interleaved([ours], 2, warm_up=0, model=model)

    query, context = figures[("query", reference.OURS)], figures[(reference.CONTEXT, reference.OURS)]
    assert query.median() >= 400 and 100 <= context.median() < 300, (query.median(), context.median())
    assert all(50 <= s.embedding_wait_ms <= 110 for s in query.samples + context.samples)
