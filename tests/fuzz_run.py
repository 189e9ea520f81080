"""One Schemathesis run against a running API, from the OpenAPI document it serves: every phase
(examples, coverage, fuzzing; stateful when the document has links) and every check, with the 5xx
the document lists (502, 503) as the only server errors allowed. Shared by the bounded run of
the test suite (tests/e2e/test_fuzz_openapi.py) and the long one (bench/fuzz.py)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

DOCUMENTED_SERVER_ERRORS = ["502", "503"]
# A user whose dataset holds a small graph before the run: half the requests that name a valid user
# (and a valid dataset) are sent to it instead, so that queries find a context and answer, and reads
# and deletions find rows (random names would almost all be a 404 or an empty list).
SEEDED_USER, SEEDED_DATASET = "fuzz-user", "main"
SEEDED_TEXT = "Alice works at Acme. Alice lives in Paris. Bob knows Alice. Alice is an engineer."
GATEWAY_QUOTA_REFUSALS = (414, 431)  # request line, headers: local/server.py, as API Gateway's quota


@dataclass
class FuzzReport:
    statuses: Counter = field(default_factory=Counter)  # (operation, status) -> responses
    failures: list[str] = field(default_factory=list)  # each: the check, the operation, the reproduction
    errors: list[str] = field(default_factory=list)  # the run itself went wrong (network, schema, ...)
    cited_answers: int = 0  # query answers (200) with evidence: a context was found and answered from
    seconds: float = 0.0

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())

    def by_status(self) -> Counter:
        counts: Counter = Counter()
        for (_, status), count in self.statuses.items():
            counts[status] += count
        return counts

    def server_errors(self) -> dict[tuple[str, int], int]:
        allowed = {int(status) for status in DOCUMENTED_SERVER_ERRORS}
        return {key: n for key, n in self.statuses.items() if key[1] >= 500 and key[1] not in allowed}


def fuzz(
    base_url: str,
    *,
    max_examples: int,
    seed: int | None = None,
    workers: int = 1,
    database: DatabaseWatch | None = None,
) -> FuzzReport:
    """The run; with `database` (one worker), every refused request (4xx) is also checked to have
    changed nothing: the database's contents after it are those after the request before."""
    import schemathesis
    from schemathesis.engine import Status, events, from_schema

    settings = {
        "suppress-health-check": ["all"],
        # No example database: a run replays nothing of an earlier one, so a seed gives the same run.
        "generation": {"max-examples": max_examples, "mode": "all", "database": "none"},
        "workers": workers,
        "checks": {
            "not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx", *DOCUMENTED_SERVER_ERRORS]},
            # Off, and why: two rules cannot be written in JSON Schema, so some values the document calls
            # valid are rightly 400s: a user id of at most 256 *bytes* of UTF-8 (maxLength counts
            # characters) and a time that is a real date within the years 1-9999 in UTC (a pattern
            # cannot know February 31st). Every other rule is exact (tests/unit/test_field_patterns.py)
            # and negative_data_rejection holds the document to it from the other side.
            "positive_data_acceptance": {"enabled": False},
        },
    }
    if seed is not None:
        settings["seed"] = seed
    config = schemathesis.Config.from_dict(settings)
    schema = schemathesis.openapi.from_url(f"{base_url}/v1/gb/openapi.json", config=config)
    report = FuzzReport()

    @schema.hook
    def map_body(context, body):
        return toward_the_seeded_user(body)

    @schema.hook
    def map_query(context, query):
        return toward_the_seeded_user(query)

    last_contents: list = [None]

    @schema.hook
    def after_call(context, case, response) -> None:
        declared = case.method.upper() == case.operation.method.upper()  # else: a 405 probe (PUT, TRACE, ...)
        operation = case.operation.label if declared else f"{case.operation.path}, other methods"
        report.statuses[(operation, response.status_code)] += 1
        if database is not None:
            contents = database.contents()
            if 400 <= response.status_code < 500:
                changed = sorted(
                    t
                    for t in contents
                    if contents[t] != last_contents[0].get(t)
                    and not may_change_when_refused(t, operation, response.status_code)
                )
                if changed:
                    report.failures.append(
                        f"a refused request changed the database ({', '.join(changed)}): {operation} "
                        f"answered {response.status_code}\n{case.as_curl_command()}"
                    )
            last_contents[0] = contents
        if operation == "POST /v1/gb/query" and response.status_code == 200:
            evidence = response.json().get("evidence") or {}
            report.cited_answers += any(evidence.get(kind) for kind in ("entities", "edges", "passages"))

    @schema.hook
    def filter_failure(context, failure, case, response) -> bool:
        # An answer the document rightly leaves out: a request line and headers over API Gateway's
        # 10240 bytes (a 256-character user id percent-encoded, a long cursor) are refused by the
        # gateway before any function runs: 414 or 431, as the local API does.
        return response.status_code not in GATEWAY_QUOTA_REFUSALS

    started = time.monotonic()
    seeded = remember_the_seed(base_url)
    if seeded != 200:
        report.errors.append(f"the seeded user's remember answered {seeded}")
    if database is not None:
        last_contents[0] = database.contents()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished) and event.status == Status.FAILURE:
            report.failures += [
                f"{check.name} on {event.recorder.label}: {check.failure_info.failure.title}\n"
                f"{check.failure_info.failure.message}\n{check.failure_info.code_sample}"
                for checks in event.recorder.checks.values()
                for check in checks
                if check.status == Status.FAILURE and check.failure_info is not None
            ]
        elif isinstance(event, events.NonFatalError):
            report.errors.append(f"{event.label}: {type(event.value).__name__}: {event.value}")
        elif isinstance(event, events.FatalError):
            report.errors.append(f"the run failed: {type(event.exception).__name__}: {event.exception}")
    report.seconds = time.monotonic() - started
    return report


def may_change_when_refused(table: str, operation: str, status: int) -> bool:
    """What a refused request writes by design: the record of an Idempotency-Key's answer (a retry
    gets the same 4xx: docs/api/index.md), and the embeddings call of a question about a dataset
    this container had answered about and that was deleted since (the call is made beside the
    lookup, to save a round trip: its cost is real, and recorded)."""
    if table == "gb_idempotency_records":
        return True
    questions = ("POST /v1/gb/query", "POST /v1/gb/eval/query", "POST /v1/gb/search")
    return table == "gb_inferences" and status == 404 and operation in questions


class DatabaseWatch:
    """What the database holds, table by table (every gb_ table from the catalog, a digest of its
    rows but their vectors), once the service's queued work is done: compared around a refused
    request, it must not have moved."""

    def __init__(self, conn) -> None:
        self.conn = conn
        tables = conn.execute(
            """SELECT c.relname, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               JOIN pg_type ty ON ty.oid = a.atttypid
               WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'gb\\_%%'
                 AND c.relname <> 'gb_schema_migrations' AND ty.typname NOT IN ('vector', '_vector')
               GROUP BY c.relname ORDER BY c.relname"""
        ).fetchall()
        self.query = " UNION ALL ".join(
            f"SELECT '{table}', count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) "
            f"FROM (SELECT {columns} FROM {table}) AS t"
            for table, columns in tables
        )

    def contents(self) -> dict[str, tuple]:
        deadline = time.monotonic() + 10
        while (
            time.monotonic() < deadline
            and self.conn.execute(
                "SELECT EXISTS (SELECT 1 FROM gb_artifacts WHERE status IN ('pending', 'running'))"
            ).fetchone()[0]
        ):
            time.sleep(0.02)  # an asynchronous remember still runs: what it writes is its own
        return {table: (count, digest) for table, count, digest in self.conn.execute(self.query).fetchall()}


def remember_the_seed(base_url: str) -> int:
    """POST /v1/gb/remember of SEEDED_TEXT for SEEDED_USER; its status."""
    from http_client import LocalApiClient

    seed = {"user_id": SEEDED_USER, "dataset": SEEDED_DATASET, "text": SEEDED_TEXT}
    return LocalApiClient(base_url).post("/v1/gb/remember", seed).status


def toward_the_seeded_user(values):
    """`values` (a body or query parameters) with the seeded user (and dataset) in place of a valid
    user and dataset, for half of them (by a checksum, so that a seed replays); values naming an
    invalid user or dataset, which a negative case may be testing, are left as generated."""
    import zlib

    from gligabao.api.validation import check_dataset_name, check_user_id

    if not isinstance(values, dict) or not isinstance(values.get("user_id"), str):
        return values
    try:
        check_user_id(values["user_id"])
        if "dataset" in values:
            check_dataset_name(values["dataset"])
    except (TypeError, ValueError):
        return values
    if zlib.crc32(repr(sorted(values.items(), key=str)).encode()) % 2:
        return values
    seeded = {**values, "user_id": SEEDED_USER}
    if "dataset" in values:
        seeded["dataset"] = SEEDED_DATASET
    return seeded
