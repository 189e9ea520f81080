"""From remember to query to evidence, over the local API (the handlers of template.yaml)."""

from __future__ import annotations

import re

from query_helpers import prompt_sent
from remember_helpers import prompt_of, rule_based_model

EDGE_LINE = re.compile(r"^\[edge (\d+)\] (.+?)\((\d+)\) --(\w+)--> (.+?)\((\d+)\)(.*)$")


def reader(body: dict) -> dict:
    """A model that answers "where does X live?" from the <graph> it is given: the lives_in edge
    that has no invalid_at (the prompt's rule), citing it and its entities."""
    prompt = prompt_of(body)
    if "<graph>" not in prompt:
        return rule_based_model(body)
    for line in prompt.splitlines():
        match = EDGE_LINE.match(line)
        if match and match.group(4) == "lives_in" and "invalid_at=" not in match.group(7):
            edge, source, source_id, _, target, target_id, _ = match.groups()
            return {
                "answer": f"{source} lives in {target}.",
                "entities": [int(source_id), int(target_id)],
                "edges": [int(edge)],
                "passages": [],
            }
    return {"answer": "I don't know.", "entities": [], "edges": [], "passages": []}


def test_remember_then_query_answers_from_the_live_fact_with_evidence_back_to_its_text(
    api, db, fake_anthropic, fake_openai
):
    fake_anthropic.responder = reader
    first = api.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "session_id": "a",
            "reference_time": "2023-05-01T09:00:00Z",
            "text": "Alice is an engineer. Alice works at Acme. Alice lives in Paris.",
        },
    )
    second = api.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "session_id": "b",
            "reference_time": "2025-01-31T09:00:00Z",
            "text": "Alice moved to Lyon in 2024.",
        },
    )
    assert (first.status, second.status) == (200, 200), (first.json, second.json)
    paris_edge = next(e["id"] for e in first.json["edges"] if e["relation"] == "lives_in")
    assert [s["id"] for s in second.json["superseded"]] == [paris_edge]

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice live?", "session_id": "b"})

    assert reply.status == 200, reply.json
    assert reply.json["session_id"] == "b"
    assert reply.json["answer"] == "Alice lives in Lyon."
    evidence = reply.json["evidence"]
    lyon_edge = next(e for e in second.json["edges"] if e["relation"] == "lives_in")
    assert [e["id"] for e in evidence["edges"]] == [lyon_edge["id"]]
    cited = evidence["edges"][0]
    assert cited["artifact_id"] == second.json["artifact_id"]  # the fact links back to its text
    assert (cited["source"], cited["target"], cited["valid_at"]) == ("Alice", "Lyon", "2024-01-01T00:00:00Z")
    assert "invalid_at" not in cited and "expired_at" not in cited
    assert [e["name"] for e in evidence["entities"]] == ["Alice", "Lyon"]
    assert evidence["passages"] == []
    prompt = prompt_sent(fake_anthropic)
    assert f"[edge {paris_edge}]" not in prompt  # superseded: never retrieved
    alice = evidence["entities"][0]["id"]
    assert f"[entity {alice}] Alice (person): engineer" in prompt
    stages = db.execute("SELECT type, stage FROM gb_inferences ORDER BY id").fetchall()
    assert stages[-2:] == [("query", "embed"), ("query", "query")]
