"""Where a request's SQL time goes, round trip by round trip and statement by statement: what the
client waited for each round trip against what the server spent on the statements it carried.

Used by bench/overhead.py (its last table). The client's wait is timed around psycopg's waits for
results (tests/sql_counting.py); the server's time is each statement sent again afterwards under
`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)` (no per-node timing to inflate it), with the same
parameters, as the same user (and dataset, when its transaction named one), its writes undone: its planning and execution times as PostgreSQL
reports them. A statement the
service prepares skips planning after its fifth use, so the execution time is what it pays; the
rest of the wait is the network, psycopg (adapting parameters, parsing rows) and waiting in the
pipeline. Transaction commands (BEGIN, COMMIT) and the session settings are not explained: their
server time is in the wait alone.
"""

from __future__ import annotations

import contextlib
import re
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import psycopg

NOT_EXPLAINED = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SELECT set_config\()", re.IGNORECASE)
FUNCTION_CALL = re.compile(r"FROM (gb_\w+?)_[0-9a-f]{10}\(")
INSERT_INTO = re.compile(r"INSERT INTO (?:public\.)?(\w+)", re.IGNORECASE)
FROM_TABLE = re.compile(r"FROM (?:public\.)?(gb_\w+)", re.IGNORECASE)


@dataclass
class Sent:
    """One statement as the service sent it."""

    text: str
    params: object


@dataclass
class Request:
    """One request's statements, grouped by the round trip that carried them, and each wait."""

    round_trips: list[list[Sent]] = field(default_factory=list)
    waits_ms: list[float] = field(default_factory=list)


def label(text: str) -> str:
    """A statement's short name: its function, the table it inserts into or reads, or its opening."""
    if found := FUNCTION_CALL.search(text):
        return found.group(1)
    if found := INSERT_INTO.search(text):
        return f"INSERT {found.group(1)}"
    if text.lstrip().upper().startswith("SELECT SET_CONFIG("):
        return "set user and timeout"
    if found := FROM_TABLE.search(text):
        return f"read {found.group(1)}"
    return " ".join(text.split())[:28]


@contextlib.contextmanager
def recorded(request: Request) -> Iterator[None]:
    """The statements and waits of what runs inside, into `request`."""
    from sql_counting import counting_round_trips

    sent: list[Sent] = []
    original = psycopg.Cursor.execute

    def execute(self, query, params=None, *args, **kwargs):
        text = query.decode() if isinstance(query, bytes) else query
        text = text.as_string(self.connection) if isinstance(text, psycopg.sql.Composable) else str(text)
        sent.append(Sent(text, params))
        return original(self, query, params, *args, **kwargs)

    with counting_round_trips(this_thread_only=True) as trips:
        add, taken = trips.add, [0]

        def add_round_trip(statement, seconds):
            add(statement, seconds)
            request.round_trips.append(sent[taken[0] :])
            request.waits_ms.append(seconds * 1000)
            taken[0] = len(sent)

        trips.add = add_round_trip
        psycopg.Cursor.execute = execute
        try:
            yield
        finally:
            psycopg.Cursor.execute = original


NAMED_DATASET = re.compile(r"set_config\('gligabao\.dataset', coalesce\('((?:[^']|'')*)'")


def transaction_scope(request: Request) -> str | None:
    """The dataset the request's first transaction named (`gligabao.dataset`), if any: its
    statements are explained under the same row-level security (db/connection.py)."""
    for sent in (sent for trip in request.round_trips for sent in trip):
        if "gligabao.dataset" not in sent.text:
            continue
        if isinstance(sent.params, dict):
            return sent.params.get("dataset") or None
        found = NAMED_DATASET.search(sent.text)
        return found.group(1).replace("''", "'") if found else None
    return None


def server_times(
    database, user_id: str, statement: Sent, scope: str | None = None
) -> tuple[float, float] | None:
    """(planning, execution) ms of `statement` explained, its writes undone; None when not explained."""
    if NOT_EXPLAINED.match(statement.text):
        return None
    with database.transaction(user_id, scope=scope) as uow:
        uow.conn.execute("SAVEPOINT explained")
        plan = uow.conn.execute(
            f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {statement.text}", statement.params
        ).fetchone()
        uow.conn.execute("ROLLBACK TO SAVEPOINT explained")
    found = plan[next(iter(plan))][0]
    return found["Planning Time"], found["Execution Time"]


def measure(call: Callable[[], object], runs: int) -> list[Request]:
    """`runs` requests of `call`, recorded (after one not kept, which prepares what it needs)."""
    call()
    requests = []
    for _ in range(runs):
        request = Request()
        with recorded(request):
            call()
        requests.append(request)
    return requests


def print_round_trips(
    title: str, requests: list[Request], database, user_id: str, explained: int = 10
) -> None:
    """Per round trip: its statements, the client's median wait, and the server's median planning
    and execution of each statement (from the first `explained` requests)."""
    shapes = statistics.mode(len(r.round_trips) for r in requests)
    kept = [r for r in requests if len(r.round_trips) == shapes]
    print(f"\n{title}: {shapes} SQL round trips, median ms of {len(kept)} requests")
    header = f"{'round trip / statement':<48}{'client wait':>12}{'server plan':>12}{'server exec':>12}"
    print(header)
    print("-" * len(header))
    total_wait = total_exec = 0.0
    for index in range(shapes):
        wait = statistics.median(r.waits_ms[index] for r in kept)
        total_wait += wait
        print(f"{f'{index + 1}.':<48}{wait:>12.2f}")
        for position, statement in enumerate(kept[0].round_trips[index]):
            times = [
                server_times(database, user_id, r.round_trips[index][position], transaction_scope(r))
                for r in kept[:explained]
            ]
            if times[0] is None:
                print(f"{'   ' + label(statement.text):<48}{'':>12}{'-':>12}{'-':>12}")
                continue
            plan, execution = (statistics.median(t[i] for t in times) for i in (0, 1))
            total_exec += execution
            print(f"{'   ' + label(statement.text):<48}{'':>12}{plan:>12.2f}{execution:>12.2f}")
    print("-" * len(header))
    print(f"{'total':<48}{total_wait:>12.2f}{'':>12}{total_exec:>12.2f}")
    print(
        f"the client waited {total_wait - total_exec:.2f} ms beyond the statements' execution: the network, "
        "psycopg, the pipeline's waits and the commands not explained"
    )
