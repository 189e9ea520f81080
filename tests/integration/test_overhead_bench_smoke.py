"""The per-request overhead benchmark in small (bench/overhead.py; the real one is `make
bench-overhead`): a few queries and remembers over HTTP and in-process, each broken down into its
parts. It keeps the benchmark working: every part is measured, none is negative, and the parts add
up to the total."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import overhead as bench

RUNS = 3


def test_each_request_is_broken_down_into_parts_that_add_up_to_its_total(db, fake_anthropic, fake_openai):
    fake_anthropic.responder = bench._model
    bench.remember_small_graph()
    raw: dict = {}
    with bench.local_api() as (port, api), bench.instrumented():
        results = bench.run_bench(port, api, RUNS, warm_up=1, keep=raw)

    assert set(results) == {(way, call) for way in ("http", "in-process") for call in ("query", "remember")}
    for (way, call), runs in raw.items():
        assert len(runs) == RUNS
        for run in runs:
            parts = run["parts"]
            assert all(ms >= 0 for ms in parts.values()), parts
            # each moment is charged to one part: together (the bench's own time included) the total
            assert abs(sum(parts.values()) - run["total"]) < 0.01 * run["total"] + 0.05, (way, call, run)
            measured = {name for name, ms in parts.items() if ms > 0}
            assert {bench.EVENT, bench.HANDLER, bench.VALIDATION, bench.SQL, bench.LLM} <= measured
            assert {bench.MONITORING, bench.SERIALISATION, bench.MEMORY} <= measured
            if way == "http":
                assert {bench.HTTP_CLIENT, bench.HTTP_SERVER, bench.LOCAL_ROUTING, bench.HAND_OFF} <= measured
            else:  # no HTTP, no local API in the way
                assert (
                    not {bench.HTTP_CLIENT, bench.HTTP_SERVER, bench.LOCAL_ROUTING, bench.HAND_OFF} & measured
                )
            if call == "query":
                assert bench.RANKING in measured
                assert run["side"].get(bench.EMBEDDINGS, 0) > 0  # the question embedded on its own thread
            else:
                assert bench.EMBEDDINGS in measured
    for figures in results.values():
        assert set(figures["parts"]) == set(bench.PARTS)
        assert all(ms >= 0 for ms in figures["parts"].values())
        assert sum(figures["parts"].values()) <= figures["total"] * 1.5  # medians: near, not exact


def test_the_querys_sql_is_shown_round_trip_by_round_trip_against_the_servers_time(
    db, fake_anthropic, fake_openai, capsys
):
    fake_anthropic.responder = bench._model
    bench.remember_small_graph()
    with bench.local_api() as (_, api):
        bench.print_sql_round_trips(api, RUNS)

    printed = capsys.readouterr().out
    assert "query, in-process: 3 SQL round trips" in printed
    assert "context() (a query without the answer), in-process: 3 SQL round trips" in printed
    rows = {line.split()[0]: line.split()[1:] for line in printed.splitlines() if line.startswith("   ")}
    assert {"gb_keyword_seeds", "gb_context_rows", "BEGIN", "COMMIT"} <= set(rows)
    planned, executed = (float(ms) for ms in rows["gb_context_rows"])
    assert planned >= 0 and executed > 0
    assert rows["BEGIN"] == ["-", "-"]  # a transaction command is not explained
