"""Time travel in POST /v1/gb/query (SPEC section 6): `as_of` answers from the facts that were valid
at that time (`valid_at <= as_of`, `invalid_at` null or later), superseded ones included; without
it, only the live facts, exactly as the seed says."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes.anthropic_server import system_text
from query_helpers import Graph, ask, prompt_sent, reply_citing
from remember_helpers import remember

from gligabao.ai.prompts.query import QUERY_AS_OF_SYSTEM, QUERY_SYSTEM

Y2019 = datetime(2019, 1, 1, tzinfo=UTC)
Y2024 = datetime(2024, 1, 1, tzinfo=UTC)
LEARNED_2024 = datetime(2024, 3, 1, tzinfo=UTC)  # when the move was remembered, superseding Acme
QUESTION = "Where did Alice work in 2022?"


def alice_moved_from_acme_to_globex(db) -> dict:
    """ "Alice worked at Acme from 2019", then "Alice moved to Globex in 2024": the Acme fact closed
    at 2024 and superseded when the Globex one was learned, as remember leaves them."""
    graph = Graph(db)
    alice = graph.entity("Alice", "person", "engineer")
    acme = graph.entity("Acme", "organization")
    globex = graph.entity("Globex", "organization")
    acme_edge = graph.edge(
        alice,
        acme,
        "works_at",
        "Alice worked at Acme from 2019.",
        valid_at=Y2019,
        invalid_at=Y2024,
        expired_at=LEARNED_2024,
        created_at=Y2019,
    )
    globex_edge = graph.edge(
        alice, globex, "works_at", "Alice moved to Globex in 2024.", valid_at=Y2024, created_at=LEARNED_2024
    )
    return {
        "alice": alice,
        "acme": acme,
        "globex": globex,
        "acme_edge": acme_edge,
        "globex_edge": globex_edge,
    }


def edge_lines(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line.startswith("[edge ")]


def test_as_of_2022_answers_from_the_superseded_acme_fact(api, db, fake_anthropic, fake_openai):
    ids = alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice worked at Acme.", edges=[ids["acme_edge"]]))

    reply = ask(api, QUESTION, as_of="2022-06-01T00:00:00Z")

    assert reply.status == 200, reply.json
    assert edge_lines(prompt_sent(fake_anthropic)) == [
        f"[edge {ids['acme_edge']}] Alice(1) --works_at--> Acme(2): Alice worked at Acme from 2019."
        " [valid_at=2019-01-01T00:00:00Z, invalid_at=2024-01-01T00:00:00Z]"
    ]
    assert reply.json["answer"] == "Alice worked at Acme."
    [edge] = reply.json["evidence"]["edges"]
    assert edge["id"] == ids["acme_edge"] and edge["target"] == "Acme"


def test_without_as_of_the_same_question_answers_from_the_live_globex_fact_only(
    api, db, fake_anthropic, fake_openai
):
    ids = alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice works at Globex.", edges=[ids["globex_edge"]]))

    reply = ask(api, QUESTION)

    assert reply.status == 200, reply.json
    prompt = prompt_sent(fake_anthropic)
    assert edge_lines(prompt) == [
        f"[edge {ids['globex_edge']}] Alice(1) --works_at--> Globex(3): Alice moved to Globex in 2024."
        " [valid_at=2024-01-01T00:00:00Z]"
    ]
    assert "<as_of>" not in prompt
    assert system_text(fake_anthropic.messages[-1]) == QUERY_SYSTEM
    assert [edge["target"] for edge in reply.json["evidence"]["edges"]] == ["Globex"]


def test_as_of_after_the_move_answers_from_globex_and_not_from_the_ended_acme_fact(
    api, db, fake_anthropic, fake_openai
):
    ids = alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice worked at Globex.", edges=[ids["globex_edge"]]))

    assert ask(api, QUESTION, as_of="2025-01-01T00:00:00+02:00").status == 200

    assert [line.split("]")[0] for line in edge_lines(prompt_sent(fake_anthropic))] == [
        f"[edge {ids['globex_edge']}"
    ]


def test_as_of_before_any_fact_began_gives_the_entities_without_facts(api, db, fake_anthropic, fake_openai):
    alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("I don't know where Alice worked then."))

    assert ask(api, QUESTION, as_of="2018-01-01T00:00:00Z").status == 200

    prompt = prompt_sent(fake_anthropic)
    assert edge_lines(prompt) == []
    assert "[entity 1] Alice (person): engineer" in prompt


def test_the_prompt_says_the_time_it_answers_for_after_the_current_time(api, db, fake_anthropic, fake_openai):
    alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice worked at Acme."))

    ask(api, QUESTION, as_of="2022-06-01T02:00:00+02:00")

    prompt = prompt_sent(fake_anthropic)
    current_time, as_of, question = prompt.split("</graph>\n")[1].split("\n", 2)
    assert current_time.startswith("<current_time>")
    assert as_of == "<as_of>2022-06-01T00:00:00Z</as_of>"  # in UTC, as every time the API writes
    assert question == f"<question>\n{QUESTION}\n</question>"
    system = system_text(fake_anthropic.messages[-1])
    assert system == QUERY_AS_OF_SYSTEM and system.startswith(QUERY_SYSTEM)
    assert "answer as things were then, not now" in system


def test_the_evidence_of_a_superseded_fact_carries_its_four_times(api, db, fake_anthropic, fake_openai):
    ids = alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice worked at Acme.", edges=[ids["acme_edge"]]))

    evidence = ask(api, QUESTION, as_of="2022-06-01T00:00:00Z").json["evidence"]
    [edge] = evidence["edges"]

    assert {key: edge[key] for key in ("valid_at", "invalid_at", "created_at", "expired_at")} == {
        "valid_at": "2019-01-01T00:00:00Z",
        "invalid_at": "2024-01-01T00:00:00Z",
        "created_at": "2019-01-01T00:00:00Z",
        "expired_at": "2024-03-01T00:00:00Z",
    }
    assert [entity["name"] for entity in evidence["entities"]] == ["Alice", "Acme"]


def test_a_fact_remembered_then_superseded_by_remember_is_answered_as_of_its_time(
    api, db, models, fake_anthropic
):
    remember(api, "Alice lives in Paris.", reference_time="2019-01-01T00:00:00Z")
    remember(api, "Alice moved to Berlin in 2024.", reference_time="2024-03-01T00:00:00Z")
    [paris] = db.execute(
        "SELECT g.id FROM gb_edges g JOIN gb_entities t ON t.id = g.target_id"
        " WHERE t.name = 'Paris' AND g.expired_at IS NOT NULL"
    ).fetchall()  # remember superseded it
    fake_anthropic.queue(reply_citing("Alice lived in Paris.", edges=[paris[0]]))

    reply = ask(api, "Where did Alice live in 2022?", as_of="2022-06-01T00:00:00Z")

    assert reply.status == 200, reply.json
    lines = edge_lines(prompt_sent(fake_anthropic))
    assert len(lines) == 1 and "--lives_in--> Paris" in lines[0]
    assert [edge["target"] for edge in reply.json["evidence"]["edges"]] == ["Paris"]

    fake_anthropic.queue(reply_citing("Alice lives in Berlin."))
    assert ask(api, "Where did Alice live in 2022?").status == 200
    lines = edge_lines(prompt_sent(fake_anthropic))
    assert len(lines) == 1 and "--lives_in--> Berlin" in lines[0]


@pytest.mark.parametrize(
    "as_of",
    [
        "2022-06-01",  # a date, not a time
        "2022-06-01T00:00:00",  # no offset
        "June 2022",
        "",
        "2024-02-30T00:00:00Z",  # no February 30
        "2023-02-29T00:00:00Z",  # not a leap year
        "2024-01-01T24:00:00Z",
        "2024-01-01T23:60:00Z",
        "2024-01-01T00:00:00+24:00",
        "9999-12-31T23:59:59-01:00",  # past the year 9999 in UTC
        "0001-01-01T00:00:00+01:00",  # before the year 1 in UTC
        20220601,
        True,
        ["2022-06-01T00:00:00Z"],
    ],
)
def test_an_as_of_that_is_not_an_rfc3339_time_with_an_offset_is_a_400(
    api, db, fake_anthropic, fake_openai, as_of
):
    alice_moved_from_acme_to_globex(db)

    reply = ask(api, QUESTION, as_of=as_of)

    assert reply.status == 400
    assert set(reply.json) == {"error"} and "as_of" in reply.json["error"]
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []


def test_a_null_as_of_is_the_live_graph(api, db, fake_anthropic, fake_openai):
    ids = alice_moved_from_acme_to_globex(db)
    fake_anthropic.queue(reply_citing("Alice works at Globex."))

    assert ask(api, QUESTION, as_of=None).status == 200

    assert [line.split("]")[0] for line in edge_lines(prompt_sent(fake_anthropic))] == [
        f"[edge {ids['globex_edge']}"
    ]


def test_as_of_never_reads_another_users_facts_of_that_time(api, db, fake_anthropic, fake_openai):
    theirs = Graph(db, "u2")
    alice, acme = theirs.entity("Alice", "person", "engineer"), theirs.entity("Acme", "organization")
    theirs.edge(
        alice, acme, "works_at", valid_at=Y2019, invalid_at=Y2024, expired_at=LEARNED_2024, created_at=Y2019
    )
    Graph(db, "u1").entity("Alice", "person", "engineer")
    fake_anthropic.queue(reply_citing("I don't know."))

    assert ask(api, QUESTION, as_of="2022-06-01T00:00:00Z").status == 200

    prompt = prompt_sent(fake_anthropic)
    assert edge_lines(prompt) == [] and "Acme" not in prompt
