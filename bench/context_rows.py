"""What reading a query's context rows costs: as dicts, as tuples, and decoded into a Context.

How long a query takes to read its context rows once PostgreSQL has sent them: psycopg's rows
as dicts (the connection's row factory) against tuples (what `retrieve` reads them as), then the
decoding into a Context (`context_from_tuples`), on the realistic worlds.

    .venv/bin/python bench/context_rows.py [--sizes 10k,100k] [--questions 30] [--rounds 5]

The context statements `retrieve` sends for `--questions` of bench/realistic_world.py's questions
are recorded, each sent again per round on one connection, its result read both ways in turns (the
order alternating); the first round is not counted. Prints the median and p95 per question, in ms,
and the rows per question.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def read_both_ways(url: str, user: str, sent: list[tuple], rounds: int) -> dict[str, list[float]]:
    import psycopg
    from psycopg.rows import dict_row, tuple_row

    from gligabao.db.connection import register_vector
    from gligabao.memory.retrieval import context_from_tuples

    times: dict[str, list[float]] = {"as dicts": [], "as tuples": [], "decoded": [], "rows": []}
    with psycopg.connect(url, row_factory=dict_row, prepare_threshold=5) as conn:
        register_vector(conn)
        for round_ in range(rounds):
            for index, (query, params) in enumerate(sent):
                ways = [dict_row, tuple_row] if (round_ + index) % 2 == 0 else [tuple_row, dict_row]
                for row_factory in ways:
                    with conn.transaction():
                        conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user])
                        cursor = conn.cursor(row_factory=row_factory)
                        cursor.execute(query, params)  # returns once the whole result is here
                        started = time.perf_counter()
                        rows = cursor.fetchall()
                        read = time.perf_counter()
                        if row_factory is tuple_row:
                            context_from_tuples(1, [column.name for column in cursor.description], rows)
                        decoded = time.perf_counter()
                    if round_ == 0:
                        continue
                    if row_factory is dict_row:
                        times["as dicts"].append((read - started) * 1000)
                    else:
                        times["as tuples"].append((read - started) * 1000)
                        times["decoded"].append((decoded - read) * 1000)
                        times["rows"].append(len(rows))
    return times


def recorded_context_statements(size: int, count: int) -> tuple[str, list[tuple], str]:
    """(the world's URL for the service, the context statements of `count` questions, the user)."""
    from dataclasses import replace

    import realistic_world as world
    from sql_counting import RecordingConnection

    from gligabao.limits import DEFAULT_LIMITS
    from gligabao.memory.retrieval import retrieve

    admin = world.admin_url()
    name = world.ensure_world(admin, size)
    asked = world.questions(world.generate(size), count)
    with contextlib.ExitStack() as stack:
        _, openai, settings = stack.enter_context(world.fake_providers())
        bundle = stack.enter_context(
            world.service_on(world.database_url(admin, name), settings, migrate_first=True)
        )
        sent = []
        for question in asked:
            vector = openai.vector(question.text, bundle.settings.embedding_dimensions)
            with bundle.database.transaction(world.USER) as uow:
                recording = RecordingConnection(uow.conn)
                retrieve(
                    replace(uow, conn=recording),
                    world.DATASET,
                    question.text,
                    lambda v=vector: v,
                    DEFAULT_LIMITS,
                )
            sent.append(recording.sent[-1])
        return bundle.database.url(), sent, world.USER


def main() -> None:
    import realistic_world as world

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5, help="the first is not counted")
    args = parser.parse_args()
    for size in [world.size_of(text) for text in args.sizes.split(",")]:
        url, sent, user = recorded_context_statements(size, args.questions)
        times = read_both_ways(url, user, sent, args.rounds)
        figures = ", ".join(
            f"{name} {statistics.median(times[name]):.2f} / {percentile(times[name], 0.95):.2f}"
            for name in ("as dicts", "as tuples", "decoded")
        )
        rows = statistics.median(times["rows"])
        print(f"{size:>7,} facts: rows read {figures} ms (p50 / p95); {rows:.0f} rows per question")


if __name__ == "__main__":
    main()
