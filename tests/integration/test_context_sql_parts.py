"""Each part of the context statement (db/graph_reads.py) on its own, against the real database:
a CTE builder's SQL run with its upstream CTEs given as literal rows (seeds/query.md, "How it
works", step 2)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from graph_rows import add_artifact, add_dataset, add_edge, add_entity
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from query_helpers import T0, Graph, at_cosine, basis

from gligabao.db import graph_reads
from gligabao.db.graph_reads import Band
from gligabao.limits import DEFAULT_LIMITS


def literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):  # a Band too
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def given(name: str, columns: str, types: str, rows: list[tuple]) -> str:
    """An upstream CTE `name(columns)` holding `rows` as literal VALUES, typed by `types` (empty
    when no rows)."""
    casts = types.split(", ")
    if not rows:
        return f"\n    {name}({columns}) AS (SELECT {', '.join(f'NULL::{t}' for t in casts)} WHERE false)"
    values = ", ".join(
        "(" + ", ".join(f"{literal(value)}::{cast}" for value, cast in zip(row, casts, strict=True)) + ")"
        for row in rows
    )
    return f"\n    {name}({columns}) AS (VALUES {values})"


def hits(name: str, rows: list[tuple[int, float]]) -> str:
    return given(f"{name}_hits", "id, similarity", "bigint, double precision", rows)


def run(db, ctes: list[str], select: str, dataset_id: int = 0, keyword_seeds=(), **overrides) -> list[dict]:
    parameters = graph_reads.context_parameters(
        dataset_id=dataset_id, vector=basis(0), keyword_seeds=list(keyword_seeds), limits=DEFAULT_LIMITS
    )
    register_vector(db)  # the vector of the question, as the application's connections have it
    statement = graph_reads.with_ctes(ctes, select)
    return db.cursor(row_factory=dict_row).execute(statement, {**parameters, **overrides}).fetchall()


def rows_of(db, ctes, table: str, columns: str, order: str, **kwargs) -> list[tuple]:
    found = run(db, ctes, f"SELECT {columns} FROM {table} ORDER BY {order}", **kwargs)
    return [tuple(row.values()) for row in found]


# --- the similarity searches ------------------------------------------------------------------


def test_a_similarity_search_takes_the_dataset_matches_from_the_threshold_best_first(db):
    mine, theirs = add_dataset(db, "u1"), add_dataset(db, "u2")
    q = basis(0)
    close = add_entity(db, mine, "Close", embedding=at_cosine(q, 0.9, 1))
    closer = add_entity(db, mine, "Closer", embedding=at_cosine(q, 0.95, 2))
    add_entity(db, mine, "Far", embedding=at_cosine(q, 0.7, 3))
    add_entity(db, theirs, "Theirs", embedding=at_cosine(q, 0.99, 4))
    entities = graph_reads.VECTOR_INDEXES[0]

    found = run(
        db, [graph_reads.similarity_search(entities)], "SELECT id FROM entities_hits", dataset_id=mine
    )

    assert [row["id"] for row in found] == [closer, close]


# --- similar facts ----------------------------------------------------------------------------


def test_similar_facts_are_the_live_edges_of_the_dataset_best_first(db):
    mine, theirs = add_dataset(db, "u1"), add_dataset(db, "u2")
    alice, acme = add_entity(db, mine, "Alice"), add_entity(db, mine, "Acme")
    bob, globex = add_entity(db, theirs, "Bob"), add_entity(db, theirs, "Globex")
    live, better = add_edge(db, mine, alice, acme, "works_at"), add_edge(db, mine, alice, acme, "founded")
    superseded = add_edge(db, mine, alice, acme, "worked_at", expired=True)
    other = add_edge(db, theirs, bob, globex, "works_at")
    ctes = [
        hits("edges", [(live, 0.8), (better, 0.9), (superseded, 0.95), (other, 0.99), (10**9, 0.97)]),
        graph_reads.similar_facts_ctes(),
    ]

    assert rows_of(db, ctes, "similar_facts", "id, rank", "rank", dataset_id=mine) == [(better, 1), (live, 2)]


# --- seeds ------------------------------------------------------------------------------------


def seeds_ctes(entity_hits: list[tuple[int, float]], similar_facts: list[int] = ()) -> list[str]:
    return [
        hits("entities", entity_hits),
        given("similar_facts", "id", "bigint", [(fact,) for fact in similar_facts]),
        graph_reads.seeds_ctes(),
    ]


def seeds(db, ctes, dataset_id, keyword_seeds=(), **overrides) -> list[tuple]:
    return rows_of(
        db,
        ctes,
        "seeds",
        "id, band, rank",
        "band, rank",
        dataset_id=dataset_id,
        keyword_seeds=keyword_seeds,
        **overrides,
    )


def test_seeds_are_the_keyword_seeds_first_then_the_similarity_seeds_each_entity_once(db):
    ds = add_dataset(db, "u1")
    alice, acme, carol, dave = (add_entity(db, ds, name) for name in ("Alice", "Acme", "Carol", "Dave"))

    # Alice is found both ways: a keyword seed only, at her keyword place.
    found = seeds(db, seeds_ctes([(alice, 0.9), (dave, 0.85), (carol, 0.8)]), ds, keyword_seeds=[acme, alice])

    assert found == [
        (acme, Band.KEYWORD_SEED, 1),
        (alice, Band.KEYWORD_SEED, 2),
        (dave, Band.SIMILARITY_SEED, 2),
        (carol, Band.SIMILARITY_SEED, 3),
    ]


def test_a_seed_not_in_the_dataset_is_dropped(db):
    mine, theirs = add_dataset(db, "u1"), add_dataset(db, "u2")
    alice, bob = add_entity(db, mine, "Alice"), add_entity(db, theirs, "Bob")

    found = seeds(db, seeds_ctes([(bob, 0.9), (10**9, 0.8)]), mine, keyword_seeds=[bob, alice])

    assert found == [(alice, Band.KEYWORD_SEED, 2)]


def test_the_fallback_is_the_most_recently_updated_entities_only_when_nothing_matched(db):
    graph = Graph(db)
    ids = [graph.entity(f"Thing {i}", embedding=None, updated_at=T0 + timedelta(hours=i)) for i in range(5)]

    found = seeds(db, seeds_ctes([]), graph.dataset_id, fallback=3)

    assert found == [
        (ids[4], Band.FALLBACK_SEED, 1),
        (ids[3], Band.FALLBACK_SEED, 2),
        (ids[2], Band.FALLBACK_SEED, 3),
    ]


@pytest.mark.parametrize("matched", ["keyword seed", "similarity seed", "similar fact"])
def test_there_is_no_fallback_when_a_seed_or_a_similar_fact_matched(db, matched):
    graph = Graph(db)
    for i in range(5):
        graph.entity(f"Thing {i}", embedding=None, updated_at=T0 + timedelta(hours=i))
    alice = graph.entity("Alice", embedding=None, updated_at=T0)

    entity_hits = [(alice, 0.9)] if matched == "similarity seed" else []
    similar_facts = [123] if matched == "similar fact" else []
    keyword_seeds = [alice] if matched == "keyword seed" else []

    found = seeds(db, seeds_ctes(entity_hits, similar_facts), graph.dataset_id, keyword_seeds=keyword_seeds)

    expected = {
        "keyword seed": [Band.KEYWORD_SEED],
        "similarity seed": [Band.SIMILARITY_SEED],
        "similar fact": [],
    }
    assert [band for _, band, _ in found] == expected[matched]


# --- expansion --------------------------------------------------------------------------------


def expansion_ctes(seed_rows: list[tuple[int, int, int]], similar_facts: list[int] = ()) -> list[str]:
    return [
        given("seeds", "id, band, rank", "bigint, integer, bigint", seed_rows),
        given(
            "similar_facts",
            "id, rank, similarity",
            "bigint, bigint, double precision",
            [(fact, i + 1, 0.9 - i / 100) for i, fact in enumerate(similar_facts)],
        ),
        graph_reads.expansion_ctes(),
    ]


def test_the_expansion_cap_counts_live_edges_only_newest_first(db):
    graph = Graph(db)
    alice = graph.entity("Alice", embedding=None)
    places = [graph.entity(f"Place {i}", "place", embedding=None) for i in range(6)]
    live = [
        graph.edge(alice, place, "visited", created_at=T0 + timedelta(minutes=i), embedding=None)
        for i, place in enumerate(places)
    ]
    for place in places[:2]:  # newer than all of them, but superseded (Alice at either end)
        graph.edge(place, alice, "hosted", created_at=T0 + timedelta(days=1), expired_at=T0, embedding=None)
        graph.edge(alice, place, "left", created_at=T0 + timedelta(days=1), expired_at=T0, embedding=None)
    ctes = expansion_ctes([(alice, Band.KEYWORD_SEED, 1)])

    around = rows_of(db, ctes, "around", "id", "created_at DESC", dataset_id=graph.dataset_id, expansion=4)
    edges = rows_of(
        db, ctes, "context_edges", "id, band, rank", "band, rank", dataset_id=graph.dataset_id, expansion=4
    )

    assert [edge_id for (edge_id,) in around] == live[::-1][:4]
    assert edges == [(edge_id, Band.EXPANSION, i + 1) for i, edge_id in enumerate(live[::-1][:4])]


def test_the_similar_facts_come_first_even_over_the_cap_each_edge_once(db):
    graph = Graph(db)
    alice, bob = graph.entity("Alice", embedding=None), graph.entity("Bob", embedding=None)
    acme, globex = graph.entity("Acme", embedding=None), graph.entity("Globex", embedding=None)
    older = graph.edge(alice, acme, "works_at", created_at=T0, embedding=None)
    newer = graph.edge(alice, globex, "visited", created_at=T0 + timedelta(hours=1), embedding=None)
    far = graph.edge(bob, globex, "works_at", created_at=T0, embedding=None)

    edges = rows_of(
        db,
        expansion_ctes([(alice, Band.KEYWORD_SEED, 1)], similar_facts=[far, newer]),
        "context_edges",
        "id, band, rank",
        "band, rank",
        dataset_id=graph.dataset_id,
        expansion=2,
    )

    # Around Alice: newer (1), older (2); newer is a similar fact: it is there once, as one.
    assert edges == [(far, Band.SIMILAR_FACT, 1), (newer, Band.SIMILAR_FACT, 2), (older, Band.EXPANSION, 2)]


def test_the_context_entities_are_the_seeds_then_the_ends_of_the_edges_in_the_edges_order(db):
    graph = Graph(db)
    alice, bob = graph.entity("Alice", embedding=None), graph.entity("Bob", embedding=None)
    acme, globex = graph.entity("Acme", embedding=None), graph.entity("Globex", embedding=None)
    graph.edge(alice, acme, "works_at", created_at=T0, embedding=None)
    graph.edge(globex, alice, "employs", created_at=T0 + timedelta(hours=1), embedding=None)
    similar = graph.edge(bob, acme, "knows", created_at=T0, embedding=None)

    entities = rows_of(
        db,
        expansion_ctes([(alice, Band.SIMILARITY_SEED, 3)], similar_facts=[similar]),
        "context_entities",
        "id, band",
        "band, rank",
        dataset_id=graph.dataset_id,
    )

    # Edges: the similar fact Bob->Acme, then Globex->Alice (newest), then Alice->Acme.
    assert entities == [
        (alice, Band.SIMILARITY_SEED),  # a seed stays a seed, though an end of every edge
        (bob, Band.ENDPOINT),
        (acme, Band.ENDPOINT),
        (globex, Band.ENDPOINT),
    ]


# --- passages ---------------------------------------------------------------------------------


def passages(db, chunk_hits, summary_hits, **overrides) -> list[tuple]:
    ctes = [hits("chunks", chunk_hits), hits("summaries", summary_hits), graph_reads.passages_ctes()]
    return rows_of(db, ctes, "passages", "id, band, rank, with_summary", "band, rank", **overrides)


def test_the_best_3_passages_come_with_their_text_then_up_to_5_found_by_their_summary_with_it_only(db):
    found = passages(
        db,
        chunk_hits=[(1, 0.95), (3, 0.90), (4, 0.89), (7, 0.80)],
        summary_hits=[
            (1, 0.78),
            (2, 0.92),
            (5, 0.88),
            (6, 0.87),
            (8, 0.79),
            (9, 0.77),
            (10, 0.76),
            (11, 0.75),
        ],
    )

    assert found == [
        (1, Band.PASSAGE_WITH_TEXT, 1, True),
        (2, Band.PASSAGE_WITH_TEXT, 2, True),
        (3, Band.PASSAGE_WITH_TEXT, 3, False),  # its summary was not found: text only
        # 4 and 7 were found by their text only: left out past the best 3
        (5, Band.PASSAGE_SUMMARY_ONLY, 5, True),
        (6, Band.PASSAGE_SUMMARY_ONLY, 6, True),
        (8, Band.PASSAGE_SUMMARY_ONLY, 8, True),
        (9, Band.PASSAGE_SUMMARY_ONLY, 9, True),
        (10, Band.PASSAGE_SUMMARY_ONLY, 10, True),
        # 11: over the 5 summary-only passages
    ]


def test_a_chunk_scores_the_better_of_its_text_and_its_summary(db):
    found = passages(db, chunk_hits=[(1, 0.80), (2, 0.76)], summary_hits=[(2, 0.99)])

    assert [(chunk, rank) for chunk, _, rank, _ in found] == [(2, 1), (1, 2)]


def test_the_passage_counts_are_parameters(db):
    found = passages(
        db,
        chunk_hits=[(1, 0.95), (2, 0.94)],
        summary_hits=[(3, 0.93), (4, 0.92), (5, 0.91)],
        passages_with_text=1,
        passages_summary_only=2,
    )

    assert [(chunk, band) for chunk, band, _, _ in found] == [
        (1, Band.PASSAGE_WITH_TEXT),
        (3, Band.PASSAGE_SUMMARY_ONLY),
        (4, Band.PASSAGE_SUMMARY_ONLY),
    ]


# --- the rows ---------------------------------------------------------------------------------


def test_the_rows_come_in_band_order_and_only_a_passage_with_text_carries_its_text(db):
    graph = Graph(db)
    alice, acme = graph.entity("Alice", embedding=None), graph.entity("Acme", embedding=None)
    works = graph.edge(alice, acme, "works_at", embedding=None)
    text = add_artifact(db, graph.dataset_id, "a long text")
    first = graph.chunk(text, 0, "text 0", "summary 0", embedding=None, summary_embedding=None)
    second = graph.chunk(text, 1, "text 1", "summary 1", embedding=None, summary_embedding=None)
    edge_columns = (
        "id, source_id, target_id, relation, description, artifact_id, valid_at, invalid_at, created_at"
    )
    ctes = [
        given(
            "context_entities",
            "id, band, rank",
            "bigint, integer, bigint",
            [(acme, Band.ENDPOINT, 3), (alice, Band.KEYWORD_SEED, 1)],
        ),
        f"""
    context_edges AS (SELECT {edge_columns}, expired_at, model_id, {int(Band.EXPANSION)} AS band, 1::bigint AS rank,
                             NULL::float8 AS similarity
                      FROM gb_edges WHERE id = {works})""",
        given(
            "passages",
            "id, band, rank, with_summary",
            "bigint, integer, bigint, boolean",
            [(second, Band.PASSAGE_SUMMARY_ONLY, 4, True), (first, Band.PASSAGE_WITH_TEXT, 1, False)],
        ),
        *(
            given(f"{index}_path", "path", "text", [("exact",)])
            for index in ("entities", "edges", "chunks", "summaries")
        ),
    ]

    found = run(db, ctes, graph_reads.CONTEXT_SELECT, dataset_id=graph.dataset_id)

    assert [(row["band"], row["id"]) for row in found[:5]] == [
        (Band.KEYWORD_SEED, alice),
        (Band.ENDPOINT, acme),
        (Band.EXPANSION, works),
        (Band.PASSAGE_WITH_TEXT, first),
        (Band.PASSAGE_SUMMARY_ONLY, second),
    ]
    assert (found[3]["text"], found[3]["summary"]) == ("text 0", None)
    assert (found[4]["text"], found[4]["summary"]) == (None, "summary 1")
    assert {row["name"]: row["type"] for row in found[5:]} == dict.fromkeys(
        ("chunks", "edges", "entities", "summaries"), "exact"
    )
    assert all(row["band"] == Band.SEARCH_PATH for row in found[5:])
