"""Ours beside the reference server (`gligabao-server` 0.108.1) on timeseries and web search.

    make bench-reference-features      # installs the reference in .venv-reference, then runs this
    .venv-reference/bin/python bench/reference_features.py [--reference-binary PATH]

Started as bench/reference.py starts them (its functions are reused): the reference in a network
namespace of its own (the script runs itself again under `unshare -n`), its model calls through
the TLS-terminating proxy to the test suite's fake providers; ours as `gligabao serve`'s local API
in this process, on a scratch database of the embedded PostgreSQL, with web search enabled
(GB_WEB_SEARCH=true) and the same fakes. The fake Anthropic answers both servers' prompts with
BothModels, and the web search calls with scripted replies in the web search tool's wire format.

It sends the same requests to both and compares their statuses, response keys, series statistics,
stored points and web search findings. The requests, in order, each to the reference then to ours
(the ids a server numbered, an entity's or an artifact's, are read from its own earlier answers):
  remember with two series (one anchored to an entity, one to the artifact); the same key again
  with overlapping times; POST /v1/gb/timeseries anchored by entity_id, by an entity selector and
  by artifact_id with a window; GET /v1/gb/timeseries; GET /v1/gb/timeseries/{id}?from=&to=;
  remember with timeseries.observations; remember with timeseries.fetch (503 on both); remember
  with web_search.

Each check is one row of the table (check, reference, ours, ok). A check fails when the statuses
differ, when the reference answers a key ours lacks (ours may add keys: listed, not a failure),
when a series' statistics or stored points differ, or when the web search's stored artifacts,
sources, facts, searches or cost differ. The differences are printed under the table; the exit
status is 1 when a check failed.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT / "layers" / "core")]

import reference as bench  # noqa: E402  (the servers, the proxy, the fake model, the namespace)

USER = "bench"
SERIES_DATASET = "features"
WEB_DATASET = "web"
TEXT = "Alice works at Acme. Bob knows Alice."
REFERENCE_TIME = "2025-06-01T00:00:00Z"

# The statistics both servers give of a series, compared value by value.
STAT_KEYS = ("count", "first", "last", "min", "max", "mean", "change", "pct_change", "trend")

# What a web search call costs on both (claude-haiku-5-5, USD per million tokens, and per search):
# the searches a reference inference counted are read back from its cost.
INPUT_USD_PER_MTOK = 0.10
OUTPUT_USD_PER_MTOK = 0.50
USD_PER_SEARCH = 0.01
# The tokens every scripted web search reply reports: the prompts differ, the costs must not.
SEARCH_USAGE = {"input_tokens": 1500, "output_tokens": 120}

REFERENCE = "reference"
OURS = "ours"


def day(number: int) -> str:
    return f"2025-05-{number:02d}T00:00:00Z"


# --- the fake model ------------------------------------------------------------------------------


class FeatureModels(bench.BothModels):
    """BothModels, leaving the web search calls to the fake's scripts (and, unscripted, to its
    default: one search that finds nothing)."""

    def __call__(self, body: dict) -> dict | None:
        from fakes.anthropic_server import web_search_tool

        return None if web_search_tool(body) is not None else super().__call__(body)


def script_web_searches(anthropic) -> None:
    """What the web says about each key entity of TEXT (Alice, Acme, Bob, in rank order): two
    searches and cited pages about Alice, one search and uncited pages about Acme, nothing about
    Bob. The briefings are sentences the fake extracts facts from."""
    from fakes.anthropic_server import FakeSearch, citation, search_result

    first = search_result("https://a.example/1", "A one", "2 days ago")
    second = search_result("https://b.example/2", "B two")
    anthropic.script_web_search(
        about_entity("Alice", "person"),
        FakeSearch("Alice news", [first, second]),
        FakeSearch("Alice latest"),
        texts=[
            ("Carol works at Acme.", [citation(second["url"], "B two"), citation(first["url"], "A one")]),
            " Dave knows Carol.",
        ],
        usage=dict(SEARCH_USAGE),
    )
    anthropic.script_web_search(
        about_entity("Acme", "organization"),
        FakeSearch("Acme news", [search_result("https://c.example/3", "C three")]),
        texts=["Erin works at Acme."],
        usage=dict(SEARCH_USAGE),
    )
    anthropic.script_web_search(
        about_entity("Bob", "person"), FakeSearch("Bob news"), usage=dict(SEARCH_USAGE)
    )


def about_entity(name: str, entity_type: str) -> str:
    """The <query> line both servers' web search prompts carry for an entity."""
    return f"<query>latest world events and news about {name} ({entity_type})</query>"


# --- the servers and their stores ----------------------------------------------------------------


@contextlib.contextmanager
def our_server(anthropic, openai) -> Iterator[tuple[int, str]]:
    """Our local API on a scratch database, web search on: (its port, the database owner's URL,
    which reads every row)."""
    from bench_setup import bench_admin_url, local_api, provider_settings, scratch_database

    os.environ.update(
        POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING", GB_WEB_SEARCH="true"
    )
    settings = {**provider_settings(anthropic, openai), "auth_mode": "none", "web_search": True}
    with scratch_database(bench_admin_url(), settings) as database, local_api() as (port, _):
        yield port, database.owner_url


class ReferenceStore:
    """The reference's SQLite file, read only."""

    def __init__(self, path: Path):
        self.path = path

    def rows(self, query: str, *params) -> list[tuple]:
        with contextlib.closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as connection:
            return connection.execute(query, params).fetchall()

    def web_sources(self, artifact_id: int) -> list[str]:
        """The URLs of the "Sources:" lines of a web_search artifact's text (it has no column)."""
        [(text,)] = self.rows("SELECT text FROM gb_artifacts WHERE id = ?", artifact_id) or [("",)]
        _, _, sources = text.partition("\n\nSources:\n")
        return re.findall(r"<([^<>]+)>", sources)

    def web_search_inferences(self, remembered: dict) -> list[tuple]:
        """(input tokens, output tokens, cost, searches read from the cost) of the web search calls
        of the remember's run: the reference's inference rows have no column counting searches."""
        run = remembered.get("remember_run_id")
        runs = self.rows("SELECT web_search_inference_ids FROM gb_remember_runs WHERE id = ?", run)
        ids = runs[0][0] if runs else "[]"
        found = self.rows(
            "SELECT input_tokens, output_tokens, cost_usd FROM gb_inferences "
            "WHERE stage = 'web_search' AND id IN (SELECT value FROM json_each(?))",
            ids,
        )
        return sorted((i, o, round(cost, 8), searches_in_cost(i, o, cost)) for i, o, cost in found)


class OurStore:
    """Our PostgreSQL database, read as its owner (no row-level security)."""

    def __init__(self, url: str):
        self.url = url

    def rows(self, query: str, *params) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url) as connection:
            return connection.execute(query.replace("?", "%s"), params).fetchall()

    def web_sources(self, artifact_id: int) -> list[str]:
        [(sources,)] = self.rows("SELECT sources FROM gb_artifacts WHERE id = ?", artifact_id) or [(None,)]
        return [source["url"] for source in sources or []]

    def web_search_inferences(self, remembered: dict) -> list[tuple]:
        """(input tokens, output tokens, cost, searches recorded) of the web dataset's web search
        calls: ours has no run row, and the dataset holds only this remember's."""
        found = self.rows(
            "SELECT i.input_tokens, i.output_tokens, i.cost_usd, i.web_searches FROM gb_inferences i "
            "JOIN gb_datasets d ON d.id = i.dataset_id WHERE d.user_id = ? AND d.name = ? "
            "AND i.stage = 'web_search'",
            USER,
            WEB_DATASET,
        )
        return sorted((i, o, round(float(cost), 8), searches) for i, o, cost, searches in found)


def searches_in_cost(input_tokens: int, output_tokens: int, cost: float) -> int:
    tokens = (input_tokens * INPUT_USD_PER_MTOK + output_tokens * OUTPUT_USD_PER_MTOK) / 1e6
    return round((cost - tokens) / USD_PER_SEARCH)


# The queries both stores answer alike (their common columns).
STORED_POINTS = (
    "SELECT s.key, s.field, p.{at}, p.value FROM gb_series_points p "
    "JOIN gb_series s ON s.id = p.series_id JOIN gb_datasets d ON d.id = s.dataset_id "
    "WHERE d.user_id = ? AND d.name = ? ORDER BY s.key, s.field, p.{at}"
)
ARTIFACT_KIND = "SELECT kind, text FROM gb_artifacts WHERE id = ?"
ARTIFACT_FACTS = (
    "SELECT s.name, e.relation, t.name FROM gb_edge_artifacts l JOIN gb_edges e ON e.id = l.edge_id "
    "JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id "
    "WHERE l.artifact_id = ? ORDER BY 1, 2, 3"
)


def stored_points(store, column: str) -> dict[str, list[tuple[str, float]]]:
    """{"key/field": [(time, value), ...]} of the series dataset, times as RFC 3339 UTC."""
    points: dict[str, list[tuple[str, float]]] = {}
    for key, field_, at, value in store.rows(STORED_POINTS.format(at=column), USER, SERIES_DATASET):
        points.setdefault(f"{key}/{field_}", []).append((utc(at), float(value)))
    return points


def utc(moment: str | datetime) -> str:
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the requests --------------------------------------------------------------------------------


class Api:
    """One server's HTTP API: (status, decoded body) of each call, whatever the status."""

    def __init__(self, port: int):
        self.port = port

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            payload = json.dumps(body) if body is not None else None
            connection.request(method, path, payload, {"content-type": "application/json"})
            reply = connection.getresponse()
            raw = reply.read()
        finally:
            connection.close()
        try:
            return reply.status, json.loads(raw)
        except ValueError:
            return reply.status, raw.decode(errors="replace")


@dataclass
class Side:
    """One server: its API, its store, the ids it numbered, its answers by step."""

    name: str
    api: Api
    store: ReferenceStore | OurStore
    ids: dict[str, int] = field(default_factory=dict)
    answers: dict[str, tuple[int, object]] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    name: str
    method: str
    path: Callable[[Side], str]
    body: Callable[[Side], dict] | None = None
    expected_status: int = 200


def remember(dataset: str, text: str = TEXT, **fields) -> dict:
    return {"user_id": USER, "dataset": dataset, "text": text, "reference_time": REFERENCE_TIME, **fields}


def attach(*series: dict) -> dict:
    return {"user_id": USER, "dataset": SERIES_DATASET, "series": list(series)}


def listing(**bounds: str) -> str:
    return urlencode({"user_id": USER, "dataset": SERIES_DATASET, **bounds})


def constant(value):
    return lambda side: value


ACME_CLOSE = {
    "key": "ACME.close",
    "unit": "USD",
    "points": [[day(1), 10.5], [day(2), 11.0], [day(3), 9.75]],
    "anchors": [{"entity": {"name": "Acme", "type": "organization"}}],
}
DOC_METRIC = {"key": "doc.metric", "points": [[day(1), 1], [day(2), 3]], "anchors": [{"artifact": True}]}
# The same key again: 05-02 is overwritten (11 -> 20), 05-04 is new.
ACME_CLOSE_AGAIN = {"key": "ACME.close", "unit": "USD", "points": [[day(2), 20], [day(4), 12]]}
INITECH_CLOSE = {
    "key": "INITECH.close",
    "name": "Initech closing price",
    "unit": "USD",
    "points": [[day(1), 10.5], [day(2), 11], [day(3), 9], [day(10), 12]],
    "anchors": [{"entity": {"name": "Initech", "type": "organization"}}],
}

STEPS = (
    Step(
        "remember series",
        "POST",
        constant("/v1/gb/remember"),
        constant(remember(SERIES_DATASET, timeseries={"series": [ACME_CLOSE, DOC_METRIC]})),
    ),
    Step(
        "remember same key again",
        "POST",
        constant("/v1/gb/remember"),
        constant(remember(SERIES_DATASET, "Dave knows Alice.", timeseries={"series": [ACME_CLOSE_AGAIN]})),
    ),
    Step(
        "POST timeseries, entity_id",
        "POST",
        constant("/v1/gb/timeseries"),
        lambda side: attach(
            {
                "key": "ACME.volume",
                "points": [[day(1), 100], [day(2), 80]],
                "anchors": [{"entity_id": side.ids.get("acme", 0)}],
            }
        ),
    ),
    Step(
        "POST timeseries, entity selector",
        "POST",
        constant("/v1/gb/timeseries"),
        constant(
            attach(
                {
                    "key": "ALICE.score",
                    "points": [[day(1), -5], [day(2), -2]],
                    "anchors": [{"entity": {"name": "alice"}}],
                }
            )
        ),
    ),
    Step(
        "POST timeseries, artifact_id+window",
        "POST",
        constant("/v1/gb/timeseries"),
        lambda side: attach(
            {
                "key": "doc.window",
                "frequency": "daily",
                "points": [[day(1), 7], [day(2), 7], [day(3), 7]],
                "anchors": [
                    {
                        "artifact_id": side.ids.get("artifact", 0),
                        "window": [day(1), day(31)],
                        "role": "context",
                    }
                ],
            }
        ),
    ),
    Step("GET timeseries", "GET", constant(f"/v1/gb/timeseries?{listing()}")),
    Step(
        "GET timeseries/{id}?from=&to=",
        "GET",
        lambda side: (
            f"/v1/gb/timeseries/{side.ids.get('series', 0)}?{listing(**{'from': day(2), 'to': day(3)})}"
        ),
    ),
    Step(
        "remember observations",
        "POST",
        constant("/v1/gb/remember"),
        constant(
            remember(
                SERIES_DATASET,
                "Erin works at Initech.",
                timeseries={"series": [INITECH_CLOSE], "observations": True},
            )
        ),
    ),
    Step(
        "remember fetch",
        "POST",
        constant("/v1/gb/remember"),
        constant(remember(SERIES_DATASET, timeseries={"fetch": {}})),
        expected_status=503,
    ),
    Step(
        "remember web_search",
        "POST",
        constant("/v1/gb/remember"),
        constant(remember(WEB_DATASET, web_search=True)),
    ),
)


def run_steps(sides: list[Side]) -> None:
    """Every step on each server in turn, the ids each numbered noted after the step that gives them."""
    for step in STEPS:
        for side in sides:
            body = step.body(side) if step.body else None
            side.answers[step.name] = side.api.call(step.method, step.path(side), body)
            note_ids(side, step.name)


def note_ids(side: Side, step: str) -> None:
    """The first remember's artifact, the entity its ACME.close anchor matched (Acme), the series."""
    status, answer = side.answers[step]
    if step != "remember series" or status != 200:
        return
    side.ids["artifact"] = answer["artifact_id"]
    acme = series_by_key(answer).get("ACME.close/value", {})
    side.ids["series"] = acme.get("id", 0)
    side.ids["acme"] = next((a["id"] for a in acme.get("anchors", []) if a.get("type") == "entity"), 0)


# --- the checks ----------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    reference: str
    ours: str
    ok: bool
    detail: str = ""  # what differs, printed under the table when the check failed
    note: str = ""  # printed under the table whatever the outcome (the keys ours adds)


def compare_steps(reference: Side, ours: Side) -> list[Check]:
    checks = []
    for step in STEPS:
        ref_answer, our_answer = reference.answers[step.name], ours.answers[step.name]
        checks.append(status_check(step, ref_answer, our_answer))
        checks.append(keys_check(step.name, ref_answer[1], our_answer[1]))
        checks.extend(step_value_checks(step.name, ref_answer, our_answer))
    return checks


def status_check(step: Step, reference: tuple, ours: tuple) -> Check:
    ok = reference[0] == ours[0] == step.expected_status
    detail = (
        ""
        if ok
        else f"{step.method} {step.name}:\n  reference: {shown(reference)}\n  ours:      {shown(ours)}"
    )
    return Check(f"{step.name}: status", str(reference[0]), str(ours[0]), ok, detail)


def keys_check(step: str, reference: object, ours: object) -> Check:
    """Every key path of the reference's answer is in ours; ours' extra ones are listed."""
    ref_keys, our_keys = key_paths(reference), key_paths(ours)
    missing, added = sorted(ref_keys - our_keys), sorted(our_keys - ref_keys)
    ours_cell = f"{len(our_keys)} (-{len(missing)} +{len(added)})"
    return Check(
        f"{step}: keys",
        str(len(ref_keys)),
        ours_cell,
        not missing,
        detail=f"{step}: ours lacks {', '.join(missing)}",
        note=f"{step}: {', '.join(added)}" if added else "",
    )


def key_paths(value: object, prefix: str = "") -> set[str]:
    """The keys of a JSON value, nested ones as `series[].stats.mean` (the items of a list merged)."""
    if isinstance(value, dict):
        paths = set()
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths |= {path} | key_paths(item, path)
        return paths
    if isinstance(value, list):
        return set().union(*(key_paths(item, f"{prefix}[]") for item in value))
    return set()


def step_value_checks(step: str, reference: tuple, ours: tuple) -> list[Check]:
    """The checks of the values a step answers: series' statistics, a window's points, an
    observation's text, the fetch's error."""
    ref_body, our_body = reference[1], ours[1]
    if not (isinstance(ref_body, dict) and isinstance(our_body, dict)):
        return []
    if step == "GET timeseries/{id}?from=&to=":
        return window_checks(step, ref_body, our_body)
    if step == "remember observations":
        return series_checks(step, ref_body, our_body) + observation_checks(step, ref_body, our_body)
    if step == "remember fetch":
        return [equal_check(f"{step}: error", ref_body.get("error"), our_body.get("error"))]
    return series_checks(step, ref_body, our_body)


def series_by_key(answer: object) -> dict[str, dict]:
    series = answer.get("series") if isinstance(answer, dict) else None
    return {f"{s['key']}/{s.get('field', 'value')}": s for s in series or [] if isinstance(s, dict)}


def series_checks(step: str, reference: dict, ours: dict) -> list[Check]:
    """For each series of the reference's answer: its stats, point_count and `points` on ours."""
    ref_series, our_series = series_by_key(reference), series_by_key(ours)
    checks = []
    for key, ref_one in ref_series.items():
        our_one = our_series.get(key, {})
        checks.append(stats_check(f"{step}: {key} stats", ref_one.get("stats"), our_one.get("stats")))
        for counted in ("points", "point_count", "created"):
            if counted in ref_one:
                checks.append(equal_check(f"{step}: {key} {counted}", ref_one[counted], our_one.get(counted)))
    for key in sorted(set(our_series) - set(ref_series)):
        checks.append(
            Check(f"{step}: {key}", "absent", "present", False, f"{step}: ours answers series {key}")
        )
    return checks


def window_checks(step: str, reference: dict, ours: dict) -> list[Check]:
    key = f"{reference.get('key')}/{reference.get('field')}"
    return [
        stats_check(f"{step}: {key} stats", reference.get("stats"), ours.get("stats")),
        stats_check(f"{step}: {key} window_stats", reference.get("window_stats"), ours.get("window_stats")),
        equal_check(f"{step}: points", points_of(reference.get("points")), points_of(ours.get("points"))),
        equal_check(f"{step}: truncated", reference.get("truncated"), ours.get("truncated")),
    ]


def points_of(points: object) -> list | None:
    if not isinstance(points, list):
        return None
    return [(utc(at), float(value)) for at, value in points]


def observation_checks(step: str, reference: dict, ours: dict) -> list[Check]:
    ref_items, our_items = reference.get("series_observations") or [], ours.get("series_observations") or []
    checks = [equal_check(f"{step}: observations", len(ref_items), len(our_items))]
    for ref_one, our_one in zip(ref_items, our_items, strict=False):
        for name in ("key", "query", "from", "to"):
            checks.append(
                equal_check(f"{step}: {ref_one.get('key')} {name}", ref_one.get(name), our_one.get(name))
            )
        # The text is ours in our own words: what it must hold is the reference's figures (values,
        # dates, percents), each of them.
        checks.append(
            equal_check(
                f"{step}: {ref_one.get('key')} text's figures",
                figures_of(ref_one.get("text")),
                figures_of(our_one.get("text")),
            )
        )
    return checks


_FIGURE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[\d:]+Z)?|[-+]?\d[\d,]*(?:\.\d+)?%?")


def figures_of(text: object) -> list[str]:
    """The numbers, percents and dates of a text, each once, sorted (signs and group commas aside)."""
    if not isinstance(text, str):
        return []
    found = {figure.lstrip("+-").replace(",", "") for figure in _FIGURE.findall(text)}
    return sorted(found)


def stats_check(name: str, reference: object, ours: object) -> Check:
    ref_values, our_values = stats_values(reference), stats_values(ours)
    differing = [key for key in STAT_KEYS if not same_value(ref_values.get(key), our_values.get(key))]
    detail = "; ".join(
        f"{key}: reference {ref_values.get(key)!r}, ours {our_values.get(key)!r}" for key in differing
    )
    return Check(name, stats_cell(ref_values), stats_cell(our_values), not differing, f"{name}: {detail}")


def stats_values(stats: object) -> dict:
    return {key: stats.get(key) for key in STAT_KEYS} if isinstance(stats, dict) else {}


def stats_cell(values: dict) -> str:
    if not values:
        return "none"
    number = lambda v: "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    return f"n={values['count']} {number(values['first'])}->{number(values['last'])} {values['trend']}"


def same_value(reference: object, ours: object) -> bool:
    numbers = (int, float)
    if isinstance(reference, numbers) and isinstance(ours, numbers) and not isinstance(ours, bool):
        return math.isclose(reference, ours, rel_tol=1e-12, abs_tol=1e-12)
    return reference == ours


def equal_check(name: str, reference: object, ours: object) -> Check:
    ok = same_value(reference, ours)
    detail = f"{name}:\n  reference: {reference!r}\n  ours:      {ours!r}"
    return Check(name, cell(reference), cell(ours), ok, detail)


def cell(value: object, width: int = 28) -> str:
    """A value on one line of the table, cut to `width`."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 3] + "..."


def shown(answer: tuple, width: int = 600) -> str:
    status, body = answer
    text = json.dumps(body, default=str) if not isinstance(body, str) else body
    return f"{status} {text[:width]}{'...' if len(text) > width else ''}"


def stored_points_checks(reference: Side, ours: Side) -> list[Check]:
    ref_points, our_points = stored_points(reference.store, "ts"), stored_points(ours.store, "at")
    return [
        equal_check(f"stored points {key}", ref_points.get(key), our_points.get(key))
        for key in sorted(set(ref_points) | set(our_points))
    ]


def web_search_checks(reference: Side, ours: Side) -> list[Check]:
    """Per entity searched: the web_search artifact on both, its sources and facts, as stored;
    then the web search calls' inferences (searches and cost)."""
    step = "remember web_search"
    ref_items, our_items = searches_by_entity(reference, step), searches_by_entity(ours, step)
    checks = [equal_check("web search: entities searched", list(ref_items), list(our_items))]
    for entity, ref_item in ref_items.items():
        checks.extend(entity_search_checks(entity, ref_item, our_items.get(entity, {}), reference, ours))
    ref_calls = reference.store.web_search_inferences(answer_of(reference, step))
    our_calls = ours.store.web_search_inferences(answer_of(ours, step))
    checks.append(
        equal_check("web search inferences: searches", [c[3] for c in ref_calls], [c[3] for c in our_calls])
    )
    checks.append(
        equal_check("web search inferences: cost", [c[2] for c in ref_calls], [c[2] for c in our_calls])
    )
    return checks


def answer_of(side: Side, step: str) -> dict:
    """The body a step answered with 200, else {}."""
    status, answer = side.answers[step]
    return answer if status == 200 and isinstance(answer, dict) else {}


def searches_by_entity(side: Side, step: str) -> dict[str, dict]:
    return {item["entity"]: item for item in answer_of(side, step).get("web_searches") or []}


def entity_search_checks(
    entity: str, ref_item: dict, our_item: dict, reference: Side, ours: Side
) -> list[Check]:
    name = f"web search {entity}"
    ref_artifact, our_artifact = stored_web_artifact(reference, ref_item), stored_web_artifact(ours, our_item)
    checks = [
        equal_check(f"{name}: searches", ref_item.get("searches"), our_item.get("searches")),
        equal_check(f"{name}: cost_usd", ref_item.get("cost_usd"), our_item.get("cost_usd")),
        equal_check(f"{name}: artifact kind", ref_artifact["kind"], our_artifact["kind"]),
        equal_check(f"{name}: stored sources", ref_artifact["sources"], our_artifact["sources"]),
        equal_check(f"{name}: answered sources", urls(ref_item), urls(our_item)),
        equal_check(f"{name}: stored facts", ref_artifact["facts"], our_artifact["facts"]),
        equal_check(f"{name}: artifact text", ref_artifact["text"], our_artifact["text"]),
    ]
    return checks


def stored_web_artifact(side: Side, item: dict) -> dict:
    """The artifact a web search answer names, as stored: kind, text, sources, facts."""
    artifact_id = item.get("artifact_id")
    if artifact_id is None:
        return {"kind": None, "text": None, "sources": None, "facts": None}
    [(kind, text)] = side.store.rows(ARTIFACT_KIND, artifact_id) or [(None, None)]
    facts = [list(row) for row in side.store.rows(ARTIFACT_FACTS, artifact_id)]
    return {"kind": kind, "text": text, "sources": side.store.web_sources(artifact_id), "facts": facts}


def urls(item: dict) -> list[str]:
    return [source.get("url") for source in item.get("sources") or []]


# --- the report ----------------------------------------------------------------------------------


def print_report(checks: list[Check]) -> None:
    widths = (66, 28, 28)
    header = f"{'check':<{widths[0]}}{'reference':<{widths[1]}}{'ours':<{widths[2]}}ok"
    print(header)
    print("-" * len(header))
    for check in checks:
        print(
            f"{cell(check.name, widths[0] - 2):<{widths[0]}}{cell(check.reference, widths[1] - 2):<{widths[1]}}"
            f"{cell(check.ours, widths[2] - 2):<{widths[2]}}{'ok' if check.ok else 'FAIL'}"
        )
    failed = [check for check in checks if not check.ok]
    if failed:
        print("\ndifferences:")
        for check in failed:
            print(f"- {check.detail or check.name}")
    notes = [check.note for check in checks if check.note]
    if notes:
        print("\nkeys ours adds (not a failure):")
        for note in notes:
            print(f"- {note}")
    print(f"\n{len(checks) - len(failed)}/{len(checks)} checks ok, {len(failed)} failed")


def compare(binary: str) -> list[Check]:
    """The fakes, the proxy, both servers, the steps on both, then the checks."""
    with bench.stage(FeatureModels(), "gb-reference-features-") as run:
        script_web_searches(run.anthropic)
        directory = run.directory
        with (
            bench.reference_server(binary, directory, run.proxy.url, run.authority.ca_file) as reference_port,
            our_server(run.anthropic, run.openai) as (our_port, our_url),
        ):
            reference = Side(
                REFERENCE, Api(reference_port), ReferenceStore(directory / bench.REFERENCE_DATABASE)
            )
            ours = Side(OURS, Api(our_port), OurStore(our_url))
            run_steps([reference, ours])
            return (
                compare_steps(reference, ours)
                + stored_points_checks(reference, ours)
                + web_search_checks(reference, ours)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-binary", help="the reference's binary (default: gligabao-server's)")
    args = parser.parse_args()
    binary = bench.reference_binary(args.reference_binary)
    bench.enter_private_network()
    checks = compare(binary)
    print_report(checks)
    sys.exit(0 if all(check.ok for check in checks) else 1)


if __name__ == "__main__":
    main()
