"""remember with `timeseries` (the gligabao server's field): series stored with the text in its
transaction (a series without anchors on the text's artifact, entity selectors matching what the
text yields), an observation of each remembered as a text of its own (`observations`), a fetch
without a provider a 503 before any model call, and query's context showing the series anchored
to its entities within the token budget."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import Reply
from graph_rows import nothing_stored
from remember_helpers import stages_called

from gligabao import bootstrap
from gligabao.memory.ranking import estimated_tokens
from gligabao.memory.series_providers import FetchedSeries, register, unregister

ACME = {
    "key": "ACME.close",
    "name": "Acme close",
    "unit": "USD",
    "points": [
        ["2025-05-01T00:00:00Z", 10.5],
        ["2025-05-02T00:00:00Z", 11.0],
        ["2025-05-03T00:00:00Z", 9.75],
    ],
    "anchors": [{"entity": {"name": "Acme"}}],
}
METRIC = {"key": "doc.metric", "points": [["2025-05-01T00:00:00Z", 1]]}
TEXT = "Alice works at Acme."


def remember(api, timeseries: dict, **more):
    return api.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT, "timeseries": timeseries, **more})


def test_series_are_stored_with_the_text_anchored_to_what_it_yields_or_to_its_artifact(api, db, models):
    reply = remember(api, {"series": [ACME, METRIC]})

    assert reply.status == 200, reply.json
    body = reply.json
    acme = next(e["id"] for e in body["entities"] if e["name"] == "Acme")
    acme_series, metric = body["series"]
    assert (acme_series["key"], acme_series["created"], acme_series["points"]) == ("ACME.close", True, 3)
    assert [(a["type"], a["id"]) for a in acme_series["anchors"]] == [("entity", acme)]
    assert [(a["type"], a["id"]) for a in metric["anchors"]] == [("artifact", body["artifact_id"])]
    stats = acme_series["stats"]
    assert (stats["count"], stats["first"], stats["last"], stats["min"], stats["max"]) == (
        3,
        10.5,
        9.75,
        9.75,
        11,
    )
    assert count_rows(db, "gb_series_points") == 4
    assert "series_observations" not in body


def test_an_anchor_that_names_nothing_stores_nothing_of_the_text(api, db, models):
    unknown = {**ACME, "anchors": [{"entity_id": 999999}]}

    reply = remember(api, {"series": [unknown]})

    assert reply.status == 400, reply.json
    assert reply.json["error"].endswith('series "ACME.close": series anchor not found: entity 999999')
    assert nothing_stored(db) and count_rows(db, "gb_series") == 0


def test_each_series_is_observed_by_a_text_remembered_after_the_text(api, db, models):
    fake_anthropic, _ = models

    reply = remember(api, {"series": [ACME, METRIC], "observations": True})

    assert reply.status == 200, reply.json
    body = reply.json
    first, second = body["series_observations"]
    assert (first["key"], first["parent_artifact_id"], first["from"], first["to"]) == (
        "ACME.close",
        body["artifact_id"],
        "2025-05-01T00:00:00Z",
        "2025-05-03T00:00:00Z",
    )
    assert first["text"].startswith(
        "Observation of the timeseries Acme close (key ACME.close, unit USD) about Acme"
    )
    assert "from 10.5 USD on 2025-05-01 to 9.75 USD on 2025-05-03 (-7.14%)" in first["text"]
    assert "on 2025-05-01 its value was 1." in second["text"]
    rows = db.execute(
        "SELECT id, kind, text, series_id, derived_from, reference_time FROM gb_artifacts WHERE kind = 'series_observation' ORDER BY id"
    ).fetchall()
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        (first["artifact_id"], first["text"], first["series_id"], body["artifact_id"]),
        (second["artifact_id"], second["text"], second["series_id"], body["artifact_id"]),
    ]
    assert rows[0][5].isoformat() == "2025-05-03T00:00:00+00:00"  # as of its last point
    assert stages_called(fake_anthropic).count("extract") == 3  # the text's, then one per observation


def test_a_failed_observation_leaves_the_text_and_its_series_and_says_why(api, db, models):
    fake_anthropic, _ = models
    acme = {"name": "Acme", "type": "organization", "description": ""}
    fake_anthropic.queue(Reply(data={"entities": [acme], "edges": []}))  # the text's extraction
    fake_anthropic.queue(Reply.error(500), times=3)  # the observation's, retried

    reply = remember(api, {"series": [ACME], "observations": True})

    assert reply.status == 200, reply.json
    [observation] = reply.json["series_observations"]
    assert "artifact_id" not in observation and "stage extract" in observation["error"]
    assert count_rows(db, "gb_series") == 1
    assert db.execute("SELECT count(*) FROM gb_artifacts WHERE kind = 'series_observation'").fetchone() == (
        0,
    )


def test_a_fetch_without_a_timeseries_provider_is_a_503_before_any_model_call(api, db, models):
    fake_anthropic, fake_openai = models

    reply = remember(api, {"fetch": {"providers": ["prices"], "before": "30d"}})

    assert reply.status == 503
    assert reply.json["error"] == "timeseries fetch is not available: no timeseries provider is registered"
    assert fake_anthropic.messages == [] and fake_openai.requests == []
    assert nothing_stored(db)


@pytest.mark.parametrize(
    ("timeseries", "more", "message"),
    [
        ({}, {}, "timeseries needs series, fetch or both"),
        ({"observations": True}, {}, "timeseries needs series, fetch or both"),
        ({"fetch": {"before": "bogus"}}, {}, "timeseries.fetch.before: a duration"),
        ({"series": [ACME], "extra": 1}, {}, "extra"),
        ({"series": [ACME]}, {"async": True}, "not with async"),
    ],
)
def test_a_bad_timeseries_request_is_a_400_that_stores_nothing(api, db, models, timeseries, more, message):
    reply = remember(api, timeseries, **more)

    assert reply.status == 400, reply.json
    assert message in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_series") == 0


def test_timeseries_are_for_a_text_only(api, db, models):
    from image_files import image_body, image_file

    reply = api.post("/v1/gb/remember", {**image_body(image_file()), "timeseries": {"series": [METRIC]}})

    assert reply.status == 400 and reply.json["error"].endswith("timeseries does not apply to an image")


def test_a_query_shows_the_series_of_its_entities_within_the_budget(api, db, models):
    remember(api, {"series": [ACME, METRIC]})

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "answer": False})

    assert reply.status == 200, reply.json
    context = reply.json["context"]
    assert "<series>" in context and "ACME.close" in context and "doc.metric" not in context


def context_tokens(context: str) -> int:
    return sum(estimated_tokens(line) for line in context.splitlines())


def test_the_series_take_only_what_the_budget_leaves(api, db, models):
    """Budgets from the graph's own size up: the series appear once they fit, never beyond it."""
    many = [{**ACME, "key": f"ACME.s{n}", "name": f"Acme series {n}"} for n in range(4)]
    remember(api, {"series": many})
    question = {"user_id": "u1", "query": "Where does Alice work?", "answer": False}
    full = api.post("/v1/gb/query", question).json["context"]
    bare = full.split("<series>")[0]

    shown = []
    for budget in range(context_tokens(bare), context_tokens(full) + 20, 15):
        reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"context_token_budget": budget}))
        context = api.post("/v1/gb/query", question).json["context"]
        assert context_tokens(context.split("<current_time>")[0]) <= budget, budget
        shown.append(context.count("ACME.s"))
    assert shown[0] == 0 and shown[-1] == 4 and shown == sorted(shown), shown


class Prices:
    """A timeseries provider of the deployment's own code: closing prices by ticker."""

    name = "prices"
    description = "daily closing prices of companies listed on a stock exchange"
    query_format = "the company's stock ticker, e.g. AAPL"

    def __init__(self, fail_for: str = ""):
        self.asked: list[tuple[str, datetime, datetime]] = []
        self.fail_for = fail_for

    def fetch(self, query, start, end):
        self.asked.append((query, start, end))
        if query == self.fail_for:
            raise RuntimeError("the provider's secret endpoint https://key@example.com is down")
        day = timedelta(days=1)
        points = [(end - 40 * day, 1.0), (end - 2 * day, 10.0), (end - day, 12.0)]  # the first is outside
        return [FetchedSeries(f"{query}.close", f"{query} close", "USD", points)]


def assigning(fake_anthropic, assignments: list[dict]) -> None:
    """The model of stage resolve_series answers `assignments`; every other call as before."""
    before = fake_anthropic.responder

    def respond(body):
        if "timeseries providers" in str(body.get("system")):
            return {"assignments": assignments}
        return before(body) if before else None

    fake_anthropic.responder = respond


@pytest.fixture
def prices():
    provider = Prices()
    register(provider)
    yield provider
    unregister("prices")


def test_the_model_assigns_providers_to_key_entities_and_each_is_fetched_over_the_window(
    api, db, models, prices
):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-haiku-5-5, claude-sonnet-4-6", max_reasoning="low")
    assigning(
        fake_anthropic,
        [
            {"entity": 1, "provider": "prices", "query": "ACME", "reason": "a listed firm"},
            {"entity": 1, "provider": "prices", "query": "ACME2", "reason": "the same pair again"},
            {"entity": 7, "provider": "prices", "query": "X", "reason": "no such entity"},
            {"entity": 0, "provider": "weather", "query": "Y", "reason": "no such provider"},
        ],
    )

    reply = remember(
        api,
        {"fetch": {"before": "30d"}, "observations": True},
        reference_time="2025-06-01T00:00:00Z",
        models={"resolve_series": "claude-sonnet-4-6"},
        reasoning={"resolve_series": "low"},
    )

    assert reply.status == 200, reply.json
    body = reply.json
    [(query, start, end)] = prices.asked  # one assignment kept: the first of the pair
    assert (query, end - start, end.isoformat()) == ("ACME", timedelta(days=30), "2025-06-01T00:00:00+00:00")
    [fetched] = body["series_fetches"]
    assert (fetched["provider"], fetched["entity"]) == ("prices", "Acme")
    [series] = fetched["series"]
    assert (series["key"], series["point_count"], series["stats"]["last"]) == ("ACME.close", 2, 12)  # clipped
    assert sorted(a["type"] for a in series["anchors"]) == ["artifact", "entity"]
    assert db.execute("SELECT source, provider FROM gb_series").fetchall() == [("fetched", "prices")]
    [observation] = body["series_observations"]
    assert observation["key"] == "ACME.close" and "2 values" in observation["text"]
    call = next(m for m in fake_anthropic.messages if "timeseries providers" in str(m.get("system")))
    assert call["model"] == "claude-sonnet-4-6"
    prompt = str(call["messages"])
    assert "[0] Alice | person" in prompt and "[1] Acme | organization" in prompt and "stock ticker" in prompt
    assert call["thinking"]["type"] == "enabled"  # its level, as asked
    stages = db.execute(
        "SELECT stage, model, reasoning FROM gb_inferences WHERE stage = 'resolve_series'"
    ).fetchall()
    assert stages == [("resolve_series", "claude-sonnet-4-6", "low")]


def test_a_failing_provider_is_reported_without_its_words_and_the_text_stands(api, db, models):
    fake_anthropic, _ = models
    assigning(fake_anthropic, [{"entity": 1, "provider": "prices", "query": "ACME", "reason": "listed"}])
    register(Prices(fail_for="ACME"))
    try:
        reply = remember(api, {"fetch": {}})
    finally:
        unregister("prices")

    assert reply.status == 200, reply.json
    [acme] = reply.json["series_fetches"]
    assert acme["error"] == "The timeseries provider failed." and "example.com" not in str(reply.json)
    assert count_rows(db, "gb_edges") == 1 and count_rows(db, "gb_series") == 0


def test_no_assignment_fetches_nothing(api, db, models, prices):
    assigning(models[0], [])

    reply = remember(api, {"fetch": {}})

    assert reply.status == 200, reply.json
    assert "series_fetches" not in reply.json and prices.asked == [] and count_rows(db, "gb_series") == 0


def test_an_unknown_provider_is_a_400_before_any_model_call(api, db, models, prices):
    reply = remember(api, {"fetch": {"providers": ["weather"]}})

    assert reply.status == 400 and "unknown provider 'weather'" in reply.json["error"]
    assert models[0].messages == [] and nothing_stored(db)


def test_a_query_reads_series_only_when_its_dataset_holds_some(api, db, models):
    from sql_counting import counting_round_trips

    from gligabao import bootstrap
    from gligabao.memory.query import Question, answer

    api.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT})
    question = Question("u1", "Where does Alice work?", answer=False)

    def statements() -> list[str]:
        answer(bootstrap.bundle(), question)  # the dataset known, the plans warm
        with counting_round_trips(this_thread_only=True) as counted:
            answer(bootstrap.bundle(), question)
        return counted.statements

    without = statements()
    api.post(
        "/v1/gb/timeseries",
        {"user_id": "u1", "series": [{**METRIC, "anchors": [{"entity": {"name": "Acme"}}]}]},
    )
    with_series = statements()

    assert not any("gb_series_points" in statement for statement in without)
    assert any("gb_series_points" in statement for statement in with_series)
    assert len(with_series) == len(without) + 2  # its own transaction: the read, with BEGIN, and COMMIT
