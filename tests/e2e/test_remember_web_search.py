"""remember with `web_search` over HTTP: off unless the deployment enables it (GB_WEB_SEARCH: a
400), a 503 without an Anthropic key before any model call; on, one search per key entity with
the model's server-side web search tool, each finding remembered as an artifact of kind
web_search with its sources, the facts it states extracted into the graph, the call recorded as
an inference with its searches and their fee; a failed search leaves the text stored."""

from __future__ import annotations

import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import FakeSearch, citation, search_result
from graph_rows import nothing_stored

from gligabao.ai.prices import cost_usd

TEXT = "Alice works at Acme."
PAGE = ("https://news.example.com/acme", "Acme hires Carol")


def remember(api, **more):
    return api.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT, "web_search": True, **more})


def test_web_search_is_a_400_unless_the_deployment_enables_it(api, db, models):
    fake_anthropic, fake_openai = models

    reply = remember(api)

    assert reply.status == 400
    assert reply.json["error"] == "web_search: not enabled on this deployment (GB_WEB_SEARCH)"
    assert fake_anthropic.messages == [] and fake_openai.requests == [] and nothing_stored(db)


def test_without_an_anthropic_key_it_is_a_503_before_any_model_call(api, db, models):
    reconfigure(web_search=True, anthropic_api_key=None)

    reply = remember(api)

    assert reply.status == 503 and nothing_stored(db)
    assert models[0].messages == [] and models[1].requests == []


def test_each_key_entity_is_searched_and_what_is_found_is_remembered_with_its_sources(api, db, models):
    fake_anthropic, _ = models
    reconfigure(web_search=True)
    fake_anthropic.script_web_search(
        "about Acme",
        FakeSearch(
            "Acme news",
            [search_result(*PAGE, page_age="2 days ago"), search_result("https://b.example", "B")],
        ),
        texts=[("Carol works at Acme.", [citation(*PAGE)])],
    )
    fake_anthropic.script_web_search("about Alice", FakeSearch("Alice news"))  # finds nothing

    reply = remember(api)

    assert reply.status == 200, reply.json
    body = reply.json
    searched = {item["entity"]: item for item in body["web_searches"]}
    assert set(searched) == {"Alice", "Acme"}  # both have the text's one fact
    acme = searched["Acme"]
    assert (acme["query"], acme["parent_artifact_id"], acme["searches"]) == (
        "latest world events and news about Acme (organization)",
        body["artifact_id"],
        ["Acme news"],
    )
    assert acme["sources"] == [{"url": PAGE[0], "title": PAGE[1], "page_age": "2 days ago"}]  # the cited page
    assert [(e["source"], e["relation"], e["target"]) for e in acme["edges"]] == [
        ("Carol", "works_at", "Acme")
    ]
    assert "artifact_id" not in searched["Alice"]  # found nothing: no artifact
    [(artifact_id, text, sources, derived_from)] = db.execute(
        "SELECT id, text, sources, derived_from FROM gb_artifacts WHERE kind = 'web_search'"
    ).fetchall()
    assert (artifact_id, derived_from) == (acme["artifact_id"], body["artifact_id"])
    assert text == f"Carol works at Acme.\n\nSources:\n- {PAGE[1]} <{PAGE[0]}> (2 days ago)"
    assert sources == acme["sources"]
    rows = db.execute(
        "SELECT model, input_tokens, output_tokens, web_searches, cost_usd FROM gb_inferences"
        " WHERE stage = 'web_search' ORDER BY id"
    ).fetchall()
    assert sorted(r[3] for r in rows) == [1, 1]  # a search each
    for model, tokens_in, tokens_out, searches, cost in rows:  # the tokens at their price, a cent a search
        assert float(cost) == pytest.approx(cost_usd(model, tokens_in, tokens_out) + 0.01 * searches)
    assert acme["cost_usd"] in [float(row[4]) for row in rows]
    # the briefing alone is extracted: the list of its sources is no text of facts
    extractions = [
        str(m["messages"]) for m in fake_anthropic.messages if "Carol works at Acme." in str(m["messages"])
    ]
    assert extractions and not any(PAGE[0] in prompt for prompt in extractions)
    assert next(m for m in fake_anthropic.web_search_requests if "Acme" in str(m["messages"]))["tools"] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    ]


def test_a_failed_search_leaves_the_text_stored_and_says_why(api, db, models):
    fake_anthropic, _ = models
    reconfigure(web_search=True)
    fake_anthropic.script_web_search("about Acme", FakeSearch("Acme"), texts=["x"], status=500)
    fake_anthropic.script_web_search("about Alice", FakeSearch("Alice news"))

    reply = remember(api)

    assert reply.status == 200, reply.json
    acme = next(item for item in reply.json["web_searches"] if item["entity"] == "Acme")
    assert "error" in acme and "artifact_id" not in acme
    assert count_rows(db, "gb_edges") == 1  # the text's fact stands


@pytest.mark.parametrize("more", [{"async": True}])
def test_web_search_is_answered_at_once(api, db, models, more):
    reconfigure(web_search=True)

    reply = remember(api, **more)

    assert reply.status == 400 and "not with async" in reply.json["error"]


def test_an_image_is_not_searched_for(api, db, models):
    from image_files import image_body, image_file

    reconfigure(web_search=True)

    reply = api.post("/v1/gb/remember", {**image_body(image_file()), "web_search": True})

    assert reply.status == 400 and reply.json["error"].endswith("web_search does not apply to an image")
