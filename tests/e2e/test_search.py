"""POST /v1/gb/search (issue 41): the ranked context of a question with scores and reasons, no LLM
call, one embeddings request, at most 3 SQL round trips; `limit`, a similarity threshold and
filters (entity types, relations, sessions, artifact metadata, valid and created windows,
include_expired), each applied in the retrieval itself. Unknown keys are a 400; another user's
memory is never reached."""

from __future__ import annotations

import json
import math

import pytest
from fakes.openai_server import cosine
from sql_counting import counting_round_trips

FACTS_CRM = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        {"name": "Acme", "type": "organization"},
        {"name": "Paris", "type": "place"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
            "valid_at": "2020-01-01T00:00:00Z",
            "invalid_at": "2022-01-01T00:00:00Z",
        },
        {
            "source": "Alice",
            "target": "Paris",
            "relation": "lives_in",
            "description": "Alice lives in Paris.",
            "valid_at": "2023-01-01T00:00:00Z",
        },
    ],
}
# What remember embeds of them (the lives_in fact first): a fact's ends, relation and description,
# an entity's name, type and description.
GRAPH_TEXTS = [
    "Alice lives_in Paris: Alice lives in Paris.",
    "Alice works_at Acme: Alice works at Acme.",
    "Alice knows Bob: Alice knows Bob.",
    "Alice (person): engineer",
    "Acme (organization): ",
    "Paris (place): ",
    "Alice (person): ",
    "Bob (person): ",
]
FACTS_CHAT = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Bob", "type": "person"}],
    "edges": [{"source": "Alice", "target": "Bob", "relation": "knows", "description": "Alice knows Bob."}],
}


def remember_facts(api, facts: dict, user_id: str = "u1", **fields) -> dict:
    reply = api.post(
        "/v1/gb/remember",
        {"user_id": user_id, "facts": facts, "reference_time": "2024-06-01T00:00:00Z", **fields},
    )
    assert reply.status == 200, reply.json
    return reply.json


@pytest.fixture
def alices_graph(api, db, models):
    """Alice's facts from the CRM (session a) and from a chat (session b), with their metadata."""
    crm = remember_facts(api, FACTS_CRM, session_id="a", metadata={"source": "crm", "tier": 1})
    chat = remember_facts(api, FACTS_CHAT, session_id="b", metadata={"source": "chat"})
    fake_anthropic, fake_openai = models
    with fake_anthropic.lock, fake_openai.lock:  # what remember called, forgotten
        fake_anthropic.requests.clear()
        fake_openai.requests.clear()
    return {"crm": crm, "chat": chat}


def search(api, query: str = "Where does Alice live and work?", user_id: str = "u1", **fields):
    return api.post("/v1/gb/search", {"user_id": user_id, "query": query, **fields})


def relations(reply) -> list[str]:
    assert reply.status == 200, reply.json
    return sorted(edge["relation"] for edge in reply.json["edges"])


def test_search_returns_scored_entities_and_facts_with_their_reasons_for_one_embeddings_request_and_no_llm_call(
    api, alices_graph, models
):
    fake_anthropic, fake_openai = models

    reply = search(api)

    assert reply.status == 200, reply.json
    body = reply.json
    assert body["dataset"] == "main"
    assert sorted(e["relation"] for e in body["edges"]) == ["knows", "lives_in", "works_at"]
    for item in body["edges"] + body["entities"]:
        assert isinstance(item["score"], float)
        assert item["reasons"] and set(item["reasons"]) <= {"keyword", "vector", "expansion", "recent"}
    scores = [edge["score"] for edge in body["edges"]]
    assert scores == sorted(scores, reverse=True)
    alice = next(e for e in body["entities"] if e["name"] == "Alice")
    assert "keyword" in alice["reasons"]
    assert all("keyword" in edge["reasons"] for edge in body["edges"])  # each touches Alice, named
    assert body["passages"] == []
    assert fake_anthropic.messages == []
    assert len(fake_openai.embedding_requests) == 1


def test_limit_cuts_each_list(api, alices_graph):
    reply = search(api, limit=1)

    assert reply.status == 200, reply.json
    assert len(reply.json["edges"]) == 1 and len(reply.json["entities"]) == 1


def vector_matches(reply) -> list[str]:
    """The relations of the facts and the names of the entities found by their vector."""
    assert reply.status == 200, reply.json
    return sorted(
        [e["relation"] for e in reply.json["edges"] if "vector" in e["reasons"]]
        + [e["name"] for e in reply.json["entities"] if "vector" in e["reasons"]]
    )


def test_the_similarity_threshold_decides_which_items_are_vector_matches(api, db, alices_graph, models):
    _, fake_openai = models
    stored = db.execute(
        "SELECT embedding::text FROM gb_edges UNION ALL SELECT embedding::text FROM gb_entities"
    ).fetchall()
    assert len(stored) == 7 and all(
        any(cosine(json.loads(vector), fake_openai.vector(t)) > 0.9999 for t in GRAPH_TEXTS)
        for (vector,) in stored
    )  # the graph's vectors are those of GRAPH_TEXTS
    question = "Where does Alice live and work?"
    lives_in = fake_openai.vector("Alice lives_in Paris: Alice lives in Paris.")  # the fact's vector
    # the question's: cosine 0.7 with the fact's (the rest on a dimension none of the graph's uses)
    graph_vectors = [fake_openai.vector(t) for t in GRAPH_TEXTS]
    free = next(i for i in range(len(lives_in)) if all(v[i] == 0 for v in graph_vectors))
    toward = [0.7 * x for x in lives_in]
    toward[free] = math.sqrt(1 - 0.7**2)
    fake_openai.override(question, toward)
    assert cosine(toward, lives_in) == pytest.approx(0.7)
    assert all(cosine(toward, v) < 0.4 for v in graph_vectors[1:])  # the rest: under even the default

    at_default = search(api, question)  # the deployment's 0.4
    below = search(api, question, similarity_threshold=0.65)
    above = search(api, question, similarity_threshold=0.75)
    above_every_cosine = search(api, question, similarity_threshold=1)

    assert vector_matches(at_default) == ["lives_in"]
    assert vector_matches(below) == ["lives_in"]
    assert vector_matches(above) == []
    assert vector_matches(above_every_cosine) == []
    assert relations(above) == ["knows", "lives_in", "works_at"]  # still found, by keyword: Alice


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"relations": ["works_at"]}, ["works_at"]),
        ({"relations": ["works_at", "knows"]}, ["knows", "works_at"]),
        ({"session_ids": ["b"]}, ["knows"]),
        ({"metadata": {"source": "crm"}}, ["lives_in", "works_at"]),
        ({"metadata": {"source": "crm", "tier": 1}}, ["lives_in", "works_at"]),
        ({"metadata": {"source": "crm", "tier": 2}}, []),
        ({"entity_types": ["place"]}, ["lives_in"]),
        ({"valid_from": "2023-06-01T00:00:00Z"}, ["knows", "lives_in"]),
        ({"valid_from": "2020-06-01T00:00:00Z", "valid_to": "2021-01-01T00:00:00Z"}, ["works_at"]),
        ({"created_to": "2000-01-01T00:00:00Z"}, []),
        ({"created_from": "2000-01-01T00:00:00Z"}, ["knows", "lives_in", "works_at"]),
    ],
)
def test_each_filter_keeps_only_the_facts_it_names(api, alices_graph, filters, expected):
    assert relations(search(api, filters=filters)) == expected


def test_entities_follow_the_filters_too(api, alices_graph):
    reply = search(api, "Paris", filters={"entity_types": ["place"]})

    assert reply.status == 200, reply.json
    assert [e["name"] for e in reply.json["entities"] if "keyword" in e["reasons"]] == ["Paris"]


def test_the_places_of_alice_start_from_alice_and_list_only_places(api, alices_graph):
    reply = search(api, "Alice", filters={"entity_types": ["place"]})

    assert relations(reply) == ["lives_in"]
    assert "keyword" in reply.json["edges"][0]["reasons"]  # reached from Alice, named, though a person
    assert [e["name"] for e in reply.json["entities"]] == ["Paris"]


def test_superseded_facts_come_back_only_with_include_expired(api, db, alices_graph):
    db.execute("UPDATE gb_edges SET expired_at = now() WHERE relation = 'lives_in'")

    assert relations(search(api)) == ["knows", "works_at"]
    with_expired = search(api, filters={"include_expired": True})
    assert relations(with_expired) == ["knows", "lives_in", "works_at"]
    lives = next(e for e in with_expired.json["edges"] if e["relation"] == "lives_in")
    assert "expired_at" in lives


def test_passages_follow_the_artifact_filters_and_not_the_graphs(api, db, models):
    from remember_helpers import paragraphs

    long_text = paragraphs(40, 6)
    reply = api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": long_text, "session_id": "a", "metadata": {"source": "book"}},
    )
    assert reply.status == 200, reply.json
    question = long_text[:200]

    found = search(api, question, similarity_threshold=-1)
    by_metadata = search(api, question, similarity_threshold=-1, filters={"metadata": {"source": "book"}})
    other_metadata = search(api, question, similarity_threshold=-1, filters={"metadata": {"source": "crm"}})
    other_session = search(api, question, similarity_threshold=-1, filters={"session_ids": ["b"]})
    graph_only = search(api, question, similarity_threshold=-1, filters={"relations": ["works_at"]})

    assert found.json["passages"] and all(p["reasons"] == ["vector"] for p in found.json["passages"])
    assert by_metadata.json["passages"] == found.json["passages"]
    assert other_metadata.json["passages"] == [] and other_session.json["passages"] == []
    assert graph_only.json["passages"] == []


def test_a_warm_search_takes_at_most_3_sql_round_trips(api, alices_graph):
    from gligabao import bootstrap
    from gligabao.db.retrieval_filters import RetrievalFilters
    from gligabao.memory.search import SearchQuery
    from gligabao.memory.search import search as run_search

    filtered = SearchQuery("u1", "Where does Alice work?", filters=RetrievalFilters(relations=("works_at",)))
    unfiltered = SearchQuery("u1", "Where does Alice work?")
    for request in (filtered, unfiltered):
        run_search(bootstrap.bundle(), request)  # the dataset known, the plans warm
        with counting_round_trips(this_thread_only=True) as counted:
            result = run_search(bootstrap.bundle(), request)
        assert result.edges
        assert counted.count <= 3, counted.statements


def test_another_users_memory_is_never_searched(api, db, alices_graph):
    remember_facts(api, FACTS_CHAT, user_id="u2", metadata={"source": "crm"})

    mine = search(api, filters={"metadata": {"source": "crm"}})
    theirs = search(api, user_id="u2")

    assert relations(mine) == ["lives_in", "works_at"]
    assert relations(theirs) == ["knows"]
    ids = {edge["id"] for edge in mine.json["edges"]}
    assert ids.isdisjoint({edge["id"] for edge in theirs.json["edges"]})
    assert search(api, user_id="u3").status == 404
    assert search(api, dataset="other").status == 404


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"filters": {"relation": ["works_at"]}}, "relation"),
        ({"filters": {"metadata": {"a": [1]}}}, "metadata"),
        ({"filters": {"relations": "works_at"}}, "relations"),
        ({"filters": {"relations": []}}, "relations"),
        ({"filters": {"session_ids": ["a\u0000"]}}, "session_ids"),
        ({"filters": {"valid_from": "yesterday"}}, "valid_from"),
        ({"filters": {"valid_from": "2024-02-30T00:00:00Z"}}, "valid_from"),
        (
            {"filters": {"valid_from": "2024-01-01T00:00:00Z", "valid_to": "2023-01-01T00:00:00Z"}},
            "valid_from",
        ),
        ({"filters": {"include_expired": "yes"}}, "include_expired"),
        ({"filters": []}, "filters"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": True}, "limit"),
        ({"similarity_threshold": 2}, "similarity_threshold"),
        ({"query": "   "}, "query"),
        ({"answer": False}, "answer"),
        ({"user_id": "u1\u00a0"}, "user_id"),
    ],
)
def test_a_hostile_or_bad_body_is_a_400_that_calls_no_model(api, alices_graph, models, body, names):
    fake_anthropic, fake_openai = models

    reply = api.post("/v1/gb/search", {"user_id": "u1", "query": "Alice", **body})

    assert reply.status == 400, reply.json
    assert names in reply.json["error"]
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []


def test_a_body_that_is_not_json_is_a_400(api, alices_graph):
    reply = api.request(
        "POST", "/v1/gb/search", raw=b"{not json", headers={"Content-Type": "application/json"}
    )

    assert reply.status == 400


# --- the same filters on query ---------------------------------------------------------------------


def test_query_takes_the_same_filters_metadata_included(api, alices_graph):
    def context_relations(**fields) -> list[str]:
        reply = api.post(
            "/v1/gb/query",
            {"user_id": "u1", "query": "Where does Alice live and work?", "answer": False, **fields},
        )
        assert reply.status == 200, reply.json
        return sorted(edge["relation"] for edge in reply.json["edges"])

    assert context_relations() == ["knows", "lives_in", "works_at"]
    assert context_relations(filters={"metadata": {"source": "chat"}}) == ["knows"]
    assert context_relations(filters={"session_ids": ["a"], "relations": ["lives_in"]}) == ["lives_in"]
    # in July 2024 Alice lived in Paris and knew Bob (Acme had ended): the filters apply to what held then
    july = "2024-07-01T00:00:00Z"
    assert context_relations(as_of=july) == ["knows", "lives_in"]
    assert context_relations(as_of=july, filters={"metadata": {"source": "crm"}}) == ["lives_in"]
    assert context_relations(as_of=july, filters={"metadata": {"source": "chat"}}) == ["knows"]


def test_an_unknown_filter_key_on_query_is_a_400(api, alices_graph):
    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Alice", "filters": {"tags": ["x"]}})

    assert reply.status == 400, reply.json
    assert "tags" in reply.json["error"]
