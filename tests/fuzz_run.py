"""One Schemathesis run against a running API, from the OpenAPI document it serves: every phase
(examples, coverage, fuzzing; stateful when the document has links) and every check, with the 5xx
the document lists (502, 503) as the only server errors allowed. Shared by the bounded run of
the test suite (tests/e2e/test_fuzz_openapi.py) and the long one (bench/fuzz.py)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

DOCUMENTED_SERVER_ERRORS = ["502", "503"]
GATEWAY_QUOTA_REFUSALS = (414, 431)  # request line, headers: local/server.py, as API Gateway's quota


@dataclass
class FuzzReport:
    statuses: Counter = field(default_factory=Counter)  # (operation, status) -> responses
    failures: list[str] = field(default_factory=list)  # each: the check, the operation, the reproduction
    errors: list[str] = field(default_factory=list)  # the run itself went wrong (network, schema, ...)
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


def fuzz(base_url: str, *, max_examples: int, seed: int | None = None, workers: int = 1) -> FuzzReport:
    import schemathesis
    from schemathesis.engine import Status, events, from_schema

    settings = {
        "suppress-health-check": ["all"],
        "generation": {"max-examples": max_examples, "mode": "all"},
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
    def after_call(context, case, response) -> None:
        declared = case.method.upper() == case.operation.method.upper()  # else: a 405 probe (PUT, TRACE, ...)
        operation = case.operation.label if declared else f"{case.operation.path}, other methods"
        report.statuses[(operation, response.status_code)] += 1

    @schema.hook
    def filter_failure(context, failure, case, response) -> bool:
        # An answer the document rightly leaves out: a request line and headers over API Gateway's
        # 10240 bytes (a 256-character user id percent-encoded, a long cursor) are refused by the
        # gateway before any function runs: 414 or 431, as the local API does.
        return response.status_code not in GATEWAY_QUOTA_REFUSALS

    started = time.monotonic()
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
