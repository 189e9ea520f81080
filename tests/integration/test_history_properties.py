"""Random histories through the real remember path (extraction and resolution by the rule-based model
behind the Anthropic fake, the embeddings fake, PostgreSQL), held against the reference model of the
rule (tests/history_reference.py).

Each history is a few texts about two people (where they live and work, whom they know), said at
instants of their own, giving a start (when the text was said, a year before or after it, or none: a
period that had ended) and an end or none, restating facts and contradicting them. It is delivered
in a random order three ways, each into a dataset of its own: one text at a time, as one batch
(windows of texts applied in order of reference time by the worker) and as asynchronous remembers.
Then the same correction and the same forget are made in each. After each step, in every dataset:

- no stored period is inverted, and no two facts that contradict hold at one instant;
- every fact's periods are the ones the reference model gives, and so `as_of` at every sampled
  instant (the predicate of the query's as_of filter) holds exactly the facts the model holds;
- the three datasets end with the same periods.

`make test` runs a bounded budget; `make test-history` runs more examples (HYPOTHESIS_PROFILE=long).
"""

from __future__ import annotations

import itertools
import os
from datetime import UTC, datetime, timedelta

import pytest
from bulk_helpers import send_batches
from history_reference import FOREVER, Said, holding_at, timeline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from job_helpers import artifact_status, pump
from remember_helpers import FUNCTIONAL_RELATIONS, call_handler, remember_handler

from gligabao.db.graph_reads import FACTS_VALID_AT

EXAMPLES = {"ci": 12, "long": 300}[os.environ.get("HYPOTHESIS_PROFILE", "ci")]
PEOPLE = ["Alice", "Bob"]
PLACES = ["Paris", "Rome", "Lyon"]
FIRMS = ["Acme", "Globex"]
SAMPLED = [datetime(1996 + y, 7, 1, tzinfo=UTC) for y in range(36)]
_datasets = itertools.count(1)


def year(y: int) -> datetime:
    return datetime(y, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def work_is_one_place_at_a_time(monkeypatch):
    """The model judges a new workplace to contradict the last, as it judges a new home."""
    monkeypatch.setattr("remember_helpers.FUNCTIONAL_RELATIONS", FUNCTIONAL_RELATIONS | {"works_at"})


def contradicts(a: tuple, b: tuple) -> bool:
    return a != b and a[0] == b[0] and a[1] == b[1] and a[1] in ("lives_in", "works_at")


@st.composite
def texts(draw):
    """(sentence, reference day, the statement the model extracts from it), each said on its own day."""
    count = draw(st.integers(2, 7))
    days = draw(st.lists(st.integers(0, 25 * 365), min_size=count, max_size=count, unique=True))
    out = []
    for day in days:
        said = datetime(2000, 1, 1, tzinfo=UTC) + timedelta(days=day)
        person = draw(st.sampled_from(PEOPLE))
        place, firm = draw(st.sampled_from(PLACES)), draw(st.sampled_from(FIRMS))
        y = draw(st.integers(1996, 2030))
        shape = draw(
            st.sampled_from(["lives", "moved", "until", "from to", "works", "joined", "left", "knows"])
        )
        if shape == "from to":
            end = draw(st.integers(y + 1, 2031))
            out.append(
                (
                    f"{person} lived in {place} from {y} to {end}.",
                    said,
                    (person, "lives_in", place),
                    year(y),
                    year(end),
                )
            )
        elif shape in ("until", "left"):
            fact = (person, "lives_in", place) if shape == "until" else (person, "works_at", firm)
            sentence = (
                f"{person} lived in {place} until {y}."
                if shape == "until"
                else f"{person} left {firm} in {y}."
            )
            start = None if year(y) <= said else said  # ended before it was said: its start unknown
            out.append((sentence, said, fact, start, year(y)))
        elif shape in ("moved", "joined"):
            fact = (person, "lives_in", place) if shape == "moved" else (person, "works_at", firm)
            sentence = (
                f"{person} moved to {place} in {y}."
                if shape == "moved"
                else f"{person} joined {firm} in {y}."
            )
            out.append((sentence, said, fact, year(y), None))
        else:
            other = next(p for p in PEOPLE if p != person)
            fact, sentence = {
                "lives": ((person, "lives_in", place), f"{person} lives in {place}."),
                "works": ((person, "works_at", firm), f"{person} works at {firm}."),
                "knows": ((person, "knows", other), f"{person} knows {other}."),
            }[shape]
            out.append((sentence, said, fact, said, None))
    return out


def rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def remember_one_at_a_time(history, order, dataset) -> None:
    handler = remember_handler()
    for i in order:
        sentence, said = history[i][:2]
        reply = call_handler(
            handler, {"user_id": "u1", "dataset": dataset, "text": sentence, "reference_time": rfc3339(said)}
        )
        assert reply.status == 200, reply.json


def remember_async(db, history, order, dataset, sqs_jobs) -> None:
    handler = remember_handler()
    ids = []
    for i in order:
        sentence, said = history[i][:2]
        body = {
            "user_id": "u1",
            "dataset": dataset,
            "text": sentence,
            "reference_time": rfc3339(said),
            "async": True,
        }
        reply = call_handler(handler, body)
        assert reply.status == 202, reply.json
        ids.append(reply.json["artifact_id"])
    pump(sqs_jobs, rounds=200)
    assert {artifact_status(db, i) for i in ids} == {("done", None)}


def remember_batch(db, history, order, dataset, sqs_jobs) -> None:
    texts_ = [{"text": history[i][0], "reference_time": rfc3339(history[i][1])} for i in order]
    ids = send_batches(texts_, dataset)
    pump(sqs_jobs, rounds=200)
    assert {artifact_status(db, i) for i in ids} == {("done", None)}


def stored(db, dataset: str) -> list[tuple]:
    """Every edge of the dataset: (fact, valid_at, invalid_at, superseded)."""
    rows = db.execute(
        """SELECT s.name, e.relation, t.name, e.valid_at, e.invalid_at, e.expired_at IS NOT NULL
           FROM gb_edges e JOIN gb_datasets d ON d.id = e.dataset_id AND d.name = %s
           JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id""",
        [dataset],
    ).fetchall()
    return [
        ((source, relation, target), valid_at, invalid_at, superseded)
        for source, relation, target, valid_at, invalid_at, superseded in rows
    ]


def stretches(rows) -> dict[tuple, list]:
    found: dict[tuple, list] = {}
    for fact, valid_at, invalid_at, superseded in rows:
        if valid_at is not None and (invalid_at is None or invalid_at > valid_at):
            found.setdefault(fact, []).append((valid_at, invalid_at, superseded))
    return {fact: sorted(p, key=lambda x: (x[0], x[1] or FOREVER)) for fact, p in found.items()}


def valid_as_of(db, dataset: str, instant: datetime) -> set[tuple]:
    """The facts the query's as_of filter lets through at `instant` (graph_reads.FACTS_VALID_AT)."""
    condition = FACTS_VALID_AT.condition.format(g="e.")
    rows = db.execute(
        f"""SELECT s.name, e.relation, t.name FROM gb_edges e
            JOIN gb_datasets d ON d.id = e.dataset_id AND d.name = %(dataset)s
            JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
            WHERE {condition}""",
        {"dataset": dataset, "as_of": instant},
    ).fetchall()
    return {tuple(row) for row in rows}


def assert_follows_the_rule(db, dataset: str, expected: dict, judged) -> None:
    rows = stored(db, dataset)
    for fact, valid_at, invalid_at, _ in rows:
        assert valid_at is None or invalid_at is None or invalid_at >= valid_at, (
            dataset,
            fact,
            valid_at,
            invalid_at,
        )
    held = stretches(rows)
    for fact, mine in held.items():
        for other, theirs in held.items():
            if judged(fact, other):
                for a, b, _ in mine:
                    for c, d, _ in theirs:
                        assert not (a < (d or FOREVER) and c < (b or FOREVER)), (dataset, fact, other)
    assert held == expected, dataset
    for instant in SAMPLED:
        assert valid_as_of(db, dataset, instant) == holding_at(expected, instant), (dataset, instant)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=texts(),
    shuffle=st.randoms(use_true_random=False),
    curate=st.booleans(),
    place=st.sampled_from(PLACES),
)
def test_texts_in_any_order_one_at_a_time_in_a_batch_or_async_keep_the_rule(
    db, models, sqs_jobs, history, shuffle, curate, place
):
    from gligabao import bootstrap
    from gligabao.memory import corrections, forget

    order = list(range(len(history)))
    shuffle.shuffle(order)
    run = next(_datasets)
    datasets = {mode: f"{mode}-{run}" for mode in ("one", "batch", "async")}
    remember_one_at_a_time(history, order, datasets["one"])
    remember_batch(db, history, order, datasets["batch"], sqs_jobs)
    remember_async(db, history, order, datasets["async"], sqs_jobs)

    said = [Said(fact, start, end, moment, seq=i) for i, (_, moment, fact, start, end) in enumerate(history)]
    expected = timeline(said, contradicts)
    for dataset in datasets.values():
        assert_follows_the_rule(db, dataset, expected, contradicts)

    if not curate:
        return
    # The same correction of the first live fact (a new place, or a new start) and the same forget of
    # the first of the other stretches, in each dataset.
    live = sorted(
        (r for r in stored(db, datasets["one"]) if not r[3] and r[1] is not None), key=lambda r: (r[0], r[1])
    )
    if not live:
        return
    fact, valid_at, invalid_at, _ = live[0]
    new_target = place if fact[1] == "lives_in" else fact[2]
    new_start = valid_at if new_target != fact[2] else valid_at + timedelta(days=30)
    if invalid_at is not None and invalid_at <= new_start:
        return
    now = bootstrap.bundle().clock()
    extra = set()
    for dataset in datasets.values():
        edge_id = edge_of(db, dataset, fact, valid_at)
        corrections.correct(
            bootstrap.bundle(),
            corrections.Correction(user_id="u1", edge_id=edge_id, target=new_target, valid_at=new_start),
        )
    new_fact = (fact[0], fact[1], new_target)
    if new_fact != fact:
        extra = {
            frozenset((new_fact, f))
            for f in [fact, *(g for g in expected if contradicts(g, fact))]
            if f != new_fact
        }
    said += [
        Said(fact, valid_at, invalid_at, now, correction=True),
        Said(new_fact, new_start, invalid_at, now),
    ]

    def judged(a, b):
        return contradicts(a, b) or frozenset((a, b)) in extra

    expected = timeline(said, judged)
    for dataset in datasets.values():
        assert_follows_the_rule(db, dataset, expected, judged)

    others = sorted((f, p) for f, pieces in expected.items() for p in pieces if f != new_fact)
    if not others:
        return
    gone_fact, (gone_start, _, _) = others[0]
    for dataset in datasets.values():
        forget.forget_edge(bootstrap.bundle(), "u1", edge_of(db, dataset, gone_fact, gone_start))
    expected = {
        f: [p for p in pieces if (f, p[0]) != (gone_fact, gone_start)] for f, pieces in expected.items()
    }
    expected = {f: pieces for f, pieces in expected.items() if pieces}
    for dataset in datasets.values():
        assert_follows_the_rule(db, dataset, expected, judged)


def edge_of(db, dataset: str, fact: tuple, valid_at) -> int:
    [(edge_id,)] = db.execute(
        """SELECT e.id FROM gb_edges e JOIN gb_datasets d ON d.id = e.dataset_id AND d.name = %s
           JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
           WHERE s.name = %s AND e.relation = %s AND t.name = %s AND e.valid_at = %s
             AND (e.invalid_at IS NULL OR e.invalid_at > e.valid_at)""",
        [dataset, *fact, valid_at],
    ).fetchall()
    return edge_id
