"""Retrieval of query, rule by rule (seeds/query.md, "How it works", steps 1 and 2).

These tests call `retrieve` with the question's vector given, on rows arranged directly.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import re
import threading
from dataclasses import replace
from datetime import timedelta

import psycopg
import pytest
from graph_rows import full_precision_index
from query_helpers import (
    NOWHERE,
    T0,
    Graph,
    at_cosine,
    basis,
    keyword_score,
    retrieved,
    retrieved_pipelined,
    scattered,
    vector_literal,
)
from sql_counting import RecordingConnection, counting_round_trips, table_rows_read

from gligabao import bootstrap
from gligabao.db.connection import register_vector
from gligabao.errors import NotFound
from gligabao.memory.retrieval import DEFAULT_LIMITS, query_terms, retrieve

Q = basis(0)  # the question's vector in the similarity tests


def near(cosine: float, away: int) -> list[float]:
    """A vector at exactly `cosine` with the question's vector Q."""
    return at_cosine(Q, cosine, away)


# --- 1. keywords ------------------------------------------------------------------------------


def test_keyword_seeds_are_ranked_by_score_so_new_york_matches_though_it_is_two_terms(db):
    graph = Graph(db)
    day = timedelta(days=1)
    museum = graph.entity("Museum", "place", "a museum in New York", embedding=None, updated_at=T0 + 5 * day)
    newark = graph.entity("Newark", "place", embedding=None, updated_at=T0 + 1 * day)
    yorkshire = graph.entity("Yorkshire", "place", embedding=None, updated_at=T0 + 2 * day)
    york = graph.entity("York", "place", embedding=None, updated_at=T0)
    new_york = graph.entity("New York", "place", "a city", embedding=None, updated_at=T0)
    graph.entity("Paris", "place", "a city", embedding=None, updated_at=T0 + 9 * day)

    context = retrieved("What happened in New York?")

    # 11, 8, then the two 3s by most recently updated, then 2; Paris scores nothing.
    assert context.keyword_seeds == [new_york, york, yorkshire, newark, museum]


def test_keyword_seeds_are_the_top_10_with_ties_broken_by_most_recently_updated(db):
    graph = Graph(db)
    ids = [
        graph.entity(f"Acme {i}", "organization", embedding=None, updated_at=T0 + timedelta(hours=i))
        for i in range(12)
    ]

    context = retrieved("Who is at acme?")

    assert context.keyword_seeds == list(reversed(ids))[:10]
    assert [e.id for e in context.entities] == context.keyword_seeds  # no edges: the seeds alone


def test_terms_match_inside_words_as_substrings(db):
    graph = Graph(db)
    engineer = graph.entity("Bob", "person", "software engineering lead", embedding=None)

    # "+1 if it appears in the description": a substring test, "engineer" is in "engineering".
    assert retrieved("Which engineer?").keyword_seeds == [engineer]


def test_keyword_seeds_are_exact_beyond_the_most_recent_entities(db):
    """Only the most recent entities are all scored (a window); older ones are searched when their
    description can still make the top 10. Whatever the data, the seeds are the brute-force top 10."""
    rng = random.Random(4)
    words = ["acme", "paris", "engineer", "berlin", "music", "coffee", "new", "york", "garden", "ai"]
    graph = Graph(db)
    entities = []
    for i in range(60):
        name = " ".join(
            rng.sample(["Alice", "Bob", "New", "York", "Acme", "Zed", "Coffee", "Ai"], rng.randint(1, 2))
        )
        name = f"{name} {i}" if rng.random() < 0.8 else name + "x" * i
        description = " ".join(rng.choices(words, k=rng.randint(0, 6)))
        updated_at = T0 + timedelta(minutes=rng.randrange(100))  # ties on purpose
        entities.append(
            (
                graph.entity(name, "thing", description, embedding=None, updated_at=updated_at),
                name,
                description,
                updated_at,
            )
        )
    questions = [
        "Where does Alice work?",
        "What about coffee in Paris and Berlin?",
        "new york music garden",
        "engineer acme paris coffee music",
        "Who is Ai?",
        "Bob",
        "what is it?",
        "acme acme engineer ai",
        "music in the garden?",  # terms in no name: one term can be enough for an older entity
        "berlin",
    ]
    # walk_rows 0: the gram index only; 20: walks too short to end here, then the gram index; 2000:
    # walks that end (each path taken on these data)
    for window, walk_rows in itertools.product((1, 3, 7, 12, 20, 500), (0, 20, 2000)):
        limits = DEFAULT_LIMITS.model_copy(update={"keyword_window": window, "keyword_walk_rows": walk_rows})
        for question in questions:
            terms, normalized = query_terms(question), " ".join(question.lower().split())
            expected = sorted(
                (
                    (keyword_score(name, description, terms, normalized), moment, entity_id)
                    for entity_id, name, description, moment in entities
                ),
                reverse=True,
            )
            expected = [entity_id for score, _, entity_id in expected if score > 0][:10]

            assert retrieved(question, limits=limits).keyword_seeds == expected, (window, walk_rows, question)


@pytest.mark.parametrize(
    "recent, older, oldest",
    [
        ("acme", "acme", "acme paris"),  # older ones need 2 terms: found by the pairs of terms
        ("acme paris", "acme paris", "acme paris coffee"),  # 3 terms: by the triples
    ],
)
def test_an_older_entity_whose_description_holds_more_terms_outranks_the_recent_ones(
    db, recent, older, oldest
):
    graph = Graph(db)
    best = graph.entity("Zed", "thing", oldest, embedding=None, updated_at=T0)
    for i in range(5):
        graph.entity(f"Old {i}", "thing", older, embedding=None, updated_at=T0 + timedelta(hours=1 + i))
    new = [
        graph.entity(f"New {i}", "thing", recent, embedding=None, updated_at=T0 + timedelta(days=1, hours=i))
        for i in range(10)
    ]

    context = retrieved("acme paris coffee?", limits=DEFAULT_LIMITS.model_copy(update={"keyword_window": 10}))

    assert context.keyword_seeds == [best, *reversed(new[1:])]


def test_older_entities_holding_one_term_are_scored_only_as_far_as_the_seeds_need(db):
    """When one term is enough for an older entity to make the seeds, only the most recently
    updated holders of each term are scored (as many as the seeds): any other one holding a single
    term has that many entities at least as good and more recent above it. Those holding two
    terms are all scored, however old."""
    graph = Graph(db)
    pairs = [
        graph.entity(
            f"Pair {i}", "thing", "coffee paris", embedding=None, updated_at=T0 + timedelta(minutes=i)
        )
        for i in range(3)
    ]
    singles = [  # each holds one of the two terms: neither term's most recent holders are the pairs
        graph.entity(
            f"Single {i}",
            "thing",
            "coffee" if i % 2 else "paris",
            embedding=None,
            updated_at=T0 + timedelta(hours=1, minutes=i),
        )
        for i in range(60)
    ]
    for i in range(5):  # the window: recent, matching nothing
        graph.entity(
            f"Recent {i}", "thing", "tea", embedding=None, updated_at=T0 + timedelta(days=1, minutes=i)
        )
    limits = DEFAULT_LIMITS.model_copy(update={"keyword_window": 5})
    question = "coffee in paris?"

    context = retrieved(question, limits=limits)
    seed_limits = limits.model_copy(update={"retrieval": "seed"})
    sent = statements_of_a_retrieval(question, basis(NOWHERE), seed_limits)
    keyword_statement, params = next(
        (query, params) for query, params in sent if "gb_series" not in str(query)
    )
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        plan = [
            row["QUERY PLAN"] for row in uow.conn.execute("EXPLAIN (ANALYZE) " + keyword_statement, params)
        ]
    older = next(plan[at + 1] for at, line in enumerate(plan) if line.strip() == "CTE older")
    scored = int(re.search(r"actual time=\S+ rows=(\d+)", older).group(1))

    assert context.keyword_seeds == [*reversed(pairs), *reversed(singles)][:10]
    # the 10 most recent holders of each term and the 3 holding both: not all 63
    assert scored <= 23, plan


def test_older_entities_whose_description_only_looks_like_the_term_take_no_holders_place(db):
    """ "banana tank" holds the grams of "bank" (ban, ank) but not the word: the most recent
    holders of a term are counted among the descriptions that hold it, not those with its grams."""
    graph = Graph(db)
    holders = [
        graph.entity(f"Holder {i}", "thing", "a bank", embedding=None, updated_at=T0 + timedelta(minutes=i))
        for i in range(12)
    ]
    for i in range(12):  # more recent than every holder
        graph.entity(
            f"Look-alike {i}",
            "thing",
            "banana tank",
            embedding=None,
            updated_at=T0 + timedelta(hours=1, minutes=i),
        )
    for i in range(3):  # the window: recent, matching nothing
        graph.entity(
            f"Recent {i}", "thing", "tea", embedding=None, updated_at=T0 + timedelta(days=1, minutes=i)
        )

    context = retrieved("which bank?", limits=DEFAULT_LIMITS.model_copy(update={"keyword_window": 3}))

    assert context.keyword_seeds == list(reversed(holders))[:10]


def gram_index_scans(database_url: str, question: str, limits) -> int:
    """How many times one retrieval of u1 scanned the description gram index."""
    scans = index_scans_of_a_retrieval(
        database_url, question, basis(NOWHERE), limits, ["gb_entity_descriptions_grams"]
    )
    return scans["gb_entity_descriptions_grams"]


def test_a_common_terms_newest_holders_are_walked_in_recency_order_without_the_gram_index(db, database_url):
    """The window holds 2 of 4 holders of "bank": the term's newest holders lie within the most
    recently updated entities, which are walked in that order; the gram index is not read."""
    graph = Graph(db)
    holders = []
    for i in range(60):
        moment = T0 + timedelta(minutes=i)
        if i % 2:
            holders.append(graph.entity(f"Holder {i}", "thing", "a bank", embedding=None, updated_at=moment))
        else:
            graph.entity(f"Other {i}", "thing", "tea", embedding=None, updated_at=moment)
    limits = DEFAULT_LIMITS.model_copy(update={"keyword_window": 4})

    seeds = retrieved("which bank?", limits=limits).keyword_seeds
    walked = gram_index_scans(database_url, "which bank?", limits)
    not_walked = gram_index_scans(
        database_url, "which bank?", limits.model_copy(update={"keyword_walk_rows": 0})
    )

    assert seeds == list(reversed(holders))[:10]
    assert walked == 0
    assert not_walked > 0


def test_a_walk_that_ends_before_enough_holders_leaves_them_to_the_gram_index(db, database_url):
    """The window is full of holders of "bank", but the older ones are rare: the walk of the
    most recent entities finds too few, and the gram index finds the rest."""
    graph = Graph(db)
    old_holders = [
        graph.entity(f"Old {i}", "thing", "a bank", embedding=None, updated_at=T0 + timedelta(minutes=i))
        for i in range(30)
    ]
    for i in range(200):  # between them and the window: no holder
        graph.entity(
            f"Other {i}", "thing", "tea", embedding=None, updated_at=T0 + timedelta(hours=1, minutes=i)
        )
    window = [
        graph.entity(
            f"New {i}", "thing", "the bank", embedding=None, updated_at=T0 + timedelta(days=1, minutes=i)
        )
        for i in range(4)
    ]
    limits = DEFAULT_LIMITS.model_copy(update={"keyword_window": 4, "keyword_walk_rows": 100})

    seeds = retrieved("which bank?", limits=limits).keyword_seeds

    assert seeds == [*reversed(window), *reversed(old_holders)][:10]
    assert gram_index_scans(database_url, "which bank?", limits) > 0


def gram_lookup_reads(
    database_url: str, admin_database_url: str, lookup: str, arguments: list, analyzed: bool
) -> dict[str, int]:
    """One gram lookup of u1's dataset "main" as the service calls it: the scans of the gram indexes
    and the sequential scans of their tables, the tables analyzed, or without any statistics (as
    right after an import: deleted, and their size unknown to the planner). As the owner: the
    service's role may not analyze."""
    with psycopg.connect(admin_database_url, autocommit=True) as owner:
        for table in ("gb_entities", "gb_entity_descriptions"):
            if analyzed:
                owner.execute(f"ANALYZE {table}")
            else:
                owner.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [table])
                owner.execute("UPDATE pg_class SET reltuples = -1 WHERE oid = %s::regclass", [table])
    indexes = ["gb_entities_name_grams", "gb_entity_descriptions_grams"]
    tables = ["gb_entities", "gb_entity_descriptions"]
    with psycopg.connect(database_url) as conn, conn.transaction():
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        dataset = conn.execute(
            "SELECT id FROM gb_datasets WHERE user_id = 'u1' AND name = 'main'"
        ).fetchone()[0]
        placeholders = ", ".join(["%s"] * (1 + len(arguments)))
        found = conn.execute(
            f"SELECT cardinality({lookup}({placeholders}))", [dataset, *arguments]
        ).fetchone()[0]
        scans = "SELECT pg_stat_get_xact_numscans(%s::regclass)"
        reads = {name: conn.execute(scans, [name]).fetchone()[0] for name in indexes + tables}
        return {"found": found, **reads}


@pytest.mark.parametrize("analyzed", [False, True], ids=["no statistics", "analyzed"])
@pytest.mark.parametrize(
    "lookup, arguments, gram_index, table",
    [
        ("gb_entities_named", [["per", "ers", "rso", "son"]], "gb_entities_name_grams", "gb_entities"),
        ("gb_entities_described", [["tea"]], "gb_entity_descriptions_grams", "gb_entity_descriptions"),
        (
            "gb_entities_described",
            [["tea"], 10, "tea"],
            "gb_entity_descriptions_grams",
            "gb_entity_descriptions",
        ),
    ],
)
def test_the_gram_lookups_read_their_gram_index_on_a_small_dataset_with_or_without_statistics(
    db, database_url, admin_database_url, lookup, arguments, gram_index, table, analyzed
):
    """A few dozen entities that all hold the term: reading each and cutting its name into grams cost
    2.3 ms a term (migration 0035), the gram index finds them in 0.08 ms."""
    graph = Graph(db)
    for i in range(50):
        graph.entity(
            f"Person {i}", "person", "drinks tea", embedding=None, updated_at=T0 + timedelta(minutes=i)
        )

    reads = gram_lookup_reads(database_url, admin_database_url, lookup, arguments, analyzed)

    assert reads["found"] == (10 if len(arguments) > 1 else 50)
    assert reads[gram_index] == 1
    assert reads[table] == 0  # no sequential scan


# --- 2. similarity ------------------------------------------------------------------------------


def test_similarity_matches_count_from_a_cosine_of_0_75(db):
    graph = Graph(db)
    carol = graph.entity("Carol", embedding=near(0.76, away=1))
    graph.entity("Dave", embedding=near(0.74, away=2))

    context = retrieved("xyzzy?", Q)

    assert context.similarity_seeds == [carol]


def test_similarity_takes_the_best_10_entities_and_the_best_10_edges(db):
    graph = Graph(db)
    entities = [graph.entity(f"Person {i}", embedding=near(0.80 + i / 100, away=1 + i)) for i in range(12)]
    hub = graph.entity("Hub", embedding=None)
    edges = [
        graph.edge(hub, entities[0], "knows", embedding=near(0.80 + i / 100, away=20 + i)) for i in range(12)
    ]

    context = retrieved("xyzzy?", Q)

    assert context.similarity_seeds == list(reversed(entities))[:10]
    assert context.similar_edges == list(reversed(edges))[:10]


def test_seeds_are_the_keyword_seeds_then_the_similarity_seeds_without_duplicates(db):
    graph = Graph(db)
    alice = graph.entity(
        "Alice", "person", "engineer", embedding=near(0.9, away=1), updated_at=T0 + timedelta(days=1)
    )
    acme = graph.entity("Acme", "organization", embedding=None, updated_at=T0)
    carol = graph.entity("Carol", embedding=near(0.8, away=2))

    context = retrieved("Does Alice know Acme?", Q)

    assert context.keyword_seeds == [alice, acme]
    assert context.similarity_seeds == [carol]  # Alice matched by both: once, as a keyword seed
    assert [e.id for e in context.entities] == [alice, acme, carol]


def test_fallback_uses_the_25_most_recently_updated_entities_when_there_is_no_seed_and_no_similar_fact(db):
    graph = Graph(db)
    ids = [
        graph.entity(f"Thing {i}", "object", embedding=None, updated_at=T0 + timedelta(hours=i))
        for i in range(30)
    ]

    context = retrieved("What do you remember?")

    assert context.fallback
    assert [e.id for e in context.entities] == list(reversed(ids))[:25]


def test_no_fallback_when_a_similar_fact_matched(db):
    graph = Graph(db)
    alice, acme = graph.entity("Alice", embedding=None), graph.entity("Acme", embedding=None)
    for i in range(5):
        graph.entity(f"Thing {i}", "object", embedding=None)
    works = graph.edge(alice, acme, "works_at", embedding=near(0.9, away=1))

    context = retrieved("xyzzy?", Q)

    assert not context.fallback
    assert [e.id for e in context.edges] == [works]
    assert {e.id for e in context.entities} == {alice, acme}  # the fact's endpoints only


# --- 2. expansion -------------------------------------------------------------------------------


def test_expansion_is_one_hop_newest_first_capped_at_100_live_edges(db):
    graph = Graph(db)
    alice = graph.entity("Alice", embedding=None)
    targets = [graph.entity(f"Place {i}", "place", embedding=None) for i in range(120)]
    live = [
        graph.edge(alice, target, "visited", created_at=T0 + timedelta(minutes=i), embedding=None)
        for i, target in enumerate(targets)
    ]
    # Newer than all of them, but superseded: not retrieved, and not counted in the cap.
    for target in targets[:10]:
        graph.edge(
            target,
            alice,
            "hosted",
            created_at=T0 + timedelta(days=1),
            expired_at=T0 + timedelta(days=2),
            embedding=None,
        )
    two_hops = graph.edge(targets[0], targets[1], "near", created_at=T0 + timedelta(days=3), embedding=None)

    context = retrieved("Where did Alice go?")

    assert [e.id for e in context.edges] == list(reversed(live))[:100]
    assert two_hops not in {e.id for e in context.edges}
    assert {e.id for e in context.entities} == {alice} | {targets[i] for i in range(20, 120)}


def test_similar_facts_are_added_even_over_the_cap_with_their_endpoints(db):
    graph = Graph(db)
    alice = graph.entity("Alice", embedding=None)
    for i in range(100):
        graph.edge(alice, graph.entity(f"Place {i}", "place", embedding=None), "visited", embedding=None)
    bob, globex = graph.entity("Bob", embedding=None), graph.entity("Globex", "organization", embedding=None)
    similar = graph.edge(bob, globex, "works_at", embedding=near(0.9, away=1))

    context = retrieved("Where did Alice go?", Q)

    assert len(context.edges) == 101
    assert context.edges[0].id == similar  # the similar facts come first
    assert {bob, globex} <= {e.id for e in context.entities}


def test_superseded_facts_are_never_retrieved_by_keywords_or_by_similarity(db):
    graph = Graph(db)
    alice, acme = graph.entity("Alice", embedding=None), graph.entity("Acme", "organization", embedding=None)
    globex = graph.entity("Globex", "organization", embedding=None)
    old = graph.edge(alice, acme, "works_at", invalid_at=T0, expired_at=T0, embedding=near(0.95, away=1))
    new = graph.edge(alice, globex, "works_at", valid_at=T0, embedding=near(0.9, away=2))

    by_keyword = retrieved("Where does Alice work?")
    by_similarity = retrieved("xyzzy?", Q)

    assert [e.id for e in by_keyword.edges] == [new]
    assert by_similarity.similar_edges == [new]
    assert old not in {e.id for e in by_similarity.edges}


# --- 2. passages --------------------------------------------------------------------------------


def test_passages_are_merged_by_chunk_best_3_with_text_then_up_to_5_with_their_summary_only(db):
    graph = Graph(db)
    text = graph.text("a long text")
    far = basis(100)

    def chunk(index, text_cosine=None, summary_cosine=None):
        return graph.chunk(
            text,
            index,
            f"text {index}",
            f"summary {index}",
            embedding=near(text_cosine, away=10 + index) if text_cosine else far,
            summary_embedding=near(summary_cosine, away=30 + index) if summary_cosine else far,
        )

    a = chunk(0, text_cosine=0.95, summary_cosine=0.78)  # score .95, found by both
    c = chunk(1, summary_cosine=0.92)
    b = chunk(2, text_cosine=0.90)
    chunk(3, text_cosine=0.85)  # found by its text only, not among the best 3: left out
    f = chunk(4, summary_cosine=0.84)
    g = chunk(5, summary_cosine=0.83)
    chunk(6, text_cosine=0.80)  # idem
    chunk(7, text_cosine=0.70, summary_cosine=0.70)  # under the threshold

    passages = retrieved("xyzzy?", Q).passages

    assert [(p.artifact_id, p.parent_id, p.index, p.text, p.summary) for p in passages] == [
        (a, text, 0, "text 0", "summary 0"),
        (c, text, 1, "text 1", "summary 1"),
        (b, text, 2, "text 2", None),  # its summary was not found
        (f, text, 4, None, "summary 4"),
        (g, text, 5, None, "summary 5"),
    ]


def test_at_most_5_chunks_and_5_summaries_are_taken_from_their_indexes(db):
    graph = Graph(db)
    text = graph.text("a long text")
    chunks = [
        graph.chunk(
            text,
            i,
            f"text {i}",
            f"summary {i}",
            embedding=near(0.9 - i / 100, away=10 + i),
            summary_embedding=near(0.8 - i / 100, away=40 + i),
        )
        for i in range(8)
    ]

    passages = retrieved("xyzzy?", Q).passages

    assert [p.artifact_id for p in passages] == chunks[:5]
    assert [p.text is not None for p in passages] == [True, True, True, False, False]


# --- 2. the per-dataset filter is exact ---------------------------------------------------------


TINY = DEFAULT_LIMITS.model_copy(update={"exact_scan_max_rows": 5, "hnsw_candidates": 16})


def test_a_small_dataset_keeps_its_best_matches_beside_a_large_dataset_with_closer_rows(db):
    large = Graph(db, "u2")
    for i in range(30):
        large.entity(f"Crowd {i}", embedding=near(0.9, away=100 + i))
    small = Graph(db, "u1")
    mine = small.entity("Mine", embedding=near(0.8, away=1))

    context = retrieved("xyzzy?", Q, limits=TINY)

    assert context.similarity_seeds == [mine]
    assert context.search_paths["entities"] == "exact"


def test_a_dataset_over_the_exact_scan_size_falls_back_to_it_when_the_index_candidates_are_all_anothers(db):
    large = Graph(db, "u2")
    for i in range(30):
        large.entity(f"Crowd {i}", embedding=near(0.9, away=100 + i))
    medium = Graph(db, "u1")
    mine = medium.entity("Mine", embedding=near(0.8, away=1))
    for i in range(8):
        medium.entity(f"Other {i}", embedding=basis(200 + i))

    context = retrieved("xyzzy?", Q, limits=TINY)

    assert context.similarity_seeds == [mine]
    # Row-level security hides the other user's candidates: on tables this small the planner
    # may then sort the user's own rows instead of reading the index, which is exact as well.
    assert context.search_paths["entities"] in ("hnsw+exact", "hnsw")


def test_a_large_dataset_is_searched_through_the_index(db):
    graph = Graph(db)
    ids = [graph.entity(f"Person {i}", embedding=near(0.8 + i / 100, away=1 + i)) for i in range(12)]

    context = retrieved("xyzzy?", Q, limits=TINY)

    assert context.search_paths["entities"] == "hnsw"
    assert context.similarity_seeds == list(reversed(ids))[:10]


def test_the_facts_search_walks_as_many_candidates_as_it_takes_whatever_the_others_take(db):
    """Each search sets hnsw.ef_search to the candidates it takes (migration 0020): walked wider,
    the facts' index finds this dataset's facts behind 45 nearer ones of another dataset without
    the exact scan; at the others' width (16) it cannot, nor at pgvector's default walk (40)."""
    rng = random.Random(20)
    crowd = Graph(db, name="other")
    crowd_hub = crowd.entity("Crowd hub", embedding=None)
    for _ in range(45):
        crowd.edge(crowd_hub, crowd_hub, "knows", embedding=scattered(Q, 0.95, rng))
    graph = Graph(db)
    hub = graph.entity("Hub", embedding=None)
    edges = [graph.edge(hub, hub, "knows", embedding=scattered(Q, 0.80 + i / 100, rng)) for i in range(12)]

    narrow = retrieved("xyzzy?", Q, limits=TINY.model_copy(update={"hnsw_fact_candidates": 16}))
    wide = retrieved("xyzzy?", Q, limits=TINY.model_copy(update={"hnsw_fact_candidates": 100}))

    assert (narrow.search_paths["edges"], wide.search_paths["edges"]) == ("hnsw+exact", "hnsw")
    assert narrow.similar_edges == wide.similar_edges == list(reversed(edges))[:10]


@pytest.mark.parametrize("search", ["entities", "edges", "chunks", "summaries"])
def test_each_search_takes_as_many_candidates_as_asked_whatever_the_transactions_walk(db, search):
    """Migration 0020: a search sets the walk (hnsw.ef_search) to its candidates itself; an HNSW
    scan returns at most the walk's width, so reading the transaction's (10 here) would give 10."""
    rng = random.Random(21)
    graph = Graph(db)
    hub, parent = graph.entity("Hub", embedding=None), graph.text()
    for i in range(40):
        graph.entity(f"Person {i}", embedding=scattered(Q, 0.9, rng))
        graph.edge(hub, hub, "knows", embedding=scattered(Q, 0.9, rng))
        graph.chunk(
            parent,
            i,
            f"chunk {i}",
            f"summary {i}",
            embedding=scattered(Q, 0.9, rng),
            summary_embedding=scattered(Q, 0.9, rng),
        )

    with db.transaction():
        db.execute("SELECT set_config('hnsw.ef_search', '10', true)")
        taken = db.execute(f"SELECT count(*) FROM gb_nearest_{search}(%s::vector, 30)", [vector_literal(Q)])

        assert taken.fetchone()[0] == 30


HNSW_INDEXES = (
    "gb_entities_embedding_half",
    "gb_edges_embedding_half",
    "gb_artifacts_embedding_half",
    "gb_artifacts_summary_embedding_half",
)
FULL_PRECISION = (
    ("gb_entities", "embedding"),
    ("gb_edges", "embedding"),
    ("gb_artifacts", "embedding"),
    ("gb_artifacts", "summary_embedding"),
)


def statements_of_a_retrieval(question: str, vector: list[float], limits) -> list[tuple]:
    """The statements one retrieval of u1 sends, with their parameters: to run or explain again."""
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        recording = RecordingConnection(uow.conn)
        retrieve(replace(uow, conn=recording), "main", question, lambda: vector, limits)
    return recording.sent


@contextlib.contextmanager
def a_retrieval_replayed(database_url: str, question: str, vector: list[float], limits):
    """A connection inside the transaction in which what one retrieval of u1 sends (`retrieve`) was
    run again: its statistics counters are then that retrieval's (a connection reports the counts
    of its earlier transactions with the current one's until it sends them to the statistics, at
    most once a second)."""
    sent = statements_of_a_retrieval(question, vector, limits)
    with psycopg.connect(database_url) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        for query, params in sent:
            conn.execute(query, params).fetchall()
        yield conn


def index_scans_of_a_retrieval(
    database_url: str, question: str, vector: list[float], limits, indexes: list[str]
) -> dict[str, int]:
    """How many times one retrieval of u1 scanned each of `indexes`."""
    with a_retrieval_replayed(database_url, question, vector, limits) as conn:
        scans = "SELECT pg_stat_get_xact_numscans(%s::regclass)"
        return {name: conn.execute(scans, [name]).fetchone()[0] for name in indexes}


def test_the_similarity_searches_of_a_dataset_over_the_exact_scan_size_read_the_hnsw_indexes(
    db, database_url
):
    # pgvector 0.8 prices a sequential scan of rows whose vectors are stored out of line (TOAST)
    # below an HNSW scan: left to itself, the planner reads every vector of the table instead.
    graph = Graph(db)
    people = [graph.entity(f"Person {i}", embedding=near(0.8, away=1 + i)) for i in range(12)]
    for i in range(12):
        graph.edge(people[i], people[(i + 1) % 12], "knows", embedding=near(0.8, away=20 + i))
    text = graph.text("a long text")
    for i in range(12):
        graph.chunk(text, i, f"part {i}", f"summary {i}", embedding=near(0.8, away=40 + i))

    scans = index_scans_of_a_retrieval(database_url, "xyzzy?", Q, TINY, list(HNSW_INDEXES))

    assert [name for name in HNSW_INDEXES if scans[name] == 0] == []


def edge_count_plan(database_url: str, sent: list[tuple]) -> str:
    """The plan of the CTE edges_small (is the dataset small enough for an exact scan?) of the
    context statement of `sent`, run again as u1 under EXPLAIN ANALYZE."""
    with psycopg.connect(database_url) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        query, params = sent[-1]
        plan = [row[0] for row in conn.execute("EXPLAIN (ANALYZE) " + query, params)]
    start = next(at for at, line in enumerate(plan) if line.strip() == "CTE edges_small")
    end = next(at for at in range(start + 1, len(plan)) if plan[at].strip().startswith("CTE "))
    return "\n".join(plan[start:end])


def a_dataset_of_12_facts(db) -> list[int]:
    graph = Graph(db)
    hub = graph.entity("Hub", embedding=None)
    return [graph.edge(hub, hub, "knows", embedding=near(0.8 + i / 100, away=20 + i)) for i in range(12)]


def test_a_dataset_found_too_large_for_the_exact_scan_is_not_counted_again(db, database_url):
    """The count of a dataset's edges reads up to exact_scan_max_rows + 1 of them, each with its
    vector inline: once a retrieval found more, the next ones of this process skip it."""
    edges = a_dataset_of_12_facts(db)
    first = statements_of_a_retrieval("xyzzy?", Q, TINY)
    again = statements_of_a_retrieval("xyzzy?", Q, TINY)
    [first_params, again_params] = [sent[-1][1] for sent in (first, again)]

    assert (first_params["edges_known_large"], again_params["edges_known_large"]) == (False, True)
    assert "on gb_edges" in edge_count_plan(database_url, first)
    assert "on gb_edges" not in edge_count_plan(database_url, again)
    assert retrieved("xyzzy?", Q, limits=TINY).similar_edges == list(reversed(edges))[:10]


def test_a_new_dataset_given_the_id_of_one_found_too_large_is_counted(db):
    a_dataset_of_12_facts(db)
    assert retrieved("xyzzy?", Q, limits=TINY).search_paths["edges"] in ("hnsw", "hnsw+exact")
    db.execute("TRUNCATE gb_edges, gb_entities, gb_artifacts, gb_datasets RESTART IDENTITY CASCADE")
    graph = Graph(db)
    hub = graph.entity("Hub", embedding=None)
    edges = [graph.edge(hub, hub, "knows", embedding=near(0.8 + i / 100, away=20 + i)) for i in range(3)]

    context = retrieved("xyzzy?", Q, limits=TINY)

    assert context.search_paths["edges"] == "exact"
    assert context.similar_edges == list(reversed(edges))


def artifact_rows_read_by_a_retrieval(database_url: str, question: str, vector: list[float], limits) -> int:
    """The rows of gb_artifacts one retrieval of u1 read, by any scan, and the entries of its
    indexes other than the HNSW ones."""
    with a_retrieval_replayed(database_url, question, vector, limits) as conn:
        index_entries = conn.execute(
            """SELECT sum(pg_stat_get_xact_tuples_returned(i.indexrelid))
               FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
               WHERE i.indrelid = 'gb_artifacts'::regclass AND c.relname <> ALL (%s)""",
            [list(HNSW_INDEXES)],
        ).fetchone()[0]
        return table_rows_read(conn, "gb_artifacts") + index_entries


@pytest.mark.parametrize("chunks", [3, 8])  # the exact scan, then the HNSW path (over TINY's 5)
def test_the_passage_searches_read_the_datasets_chunks_and_not_its_texts(db, database_url, chunks):
    # An agent remembers many short messages: texts that are never chunked. Counting the chunks
    # and scanning few of them exactly read gb_artifacts by dataset, through every text.
    graph = Graph(db)
    graph.entity("Alice", embedding=near(0.9, away=1))
    document = graph.text("a long text")
    for i in range(chunks):
        graph.chunk(document, i, f"part {i}", f"summary {i}", embedding=near(0.85, away=10 + i))
    db.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text)
           SELECT %s, 'text', 'message ' || n FROM generate_series(1, 3000) AS n""",
        [graph.dataset_id],
    )
    db.execute("ANALYZE gb_artifacts")

    read = artifact_rows_read_by_a_retrieval(database_url, "Alice?", Q, TINY)

    assert retrieved("Alice?", Q, limits=TINY).passages
    assert read < 100, read  # 3,000 texts and more without migration 0023's index


def test_tables_left_with_their_full_precision_indexes_are_searched_through_them_alike(db, database_url):
    """A table migration 0019 left to be rebuilt by hand (over 50,000 rows) keeps its full-precision
    index: the searches read that one, and find what the half-precision ones find."""
    graph = Graph(db)
    people = [graph.entity(f"Person {i}", embedding=near(0.95 - i / 50, away=1 + i)) for i in range(12)]
    for i in range(12):
        graph.edge(people[i], people[(i + 1) % 12], "knows", embedding=near(0.95 - i / 50, away=20 + i))
    text = graph.text("a long text")
    for i in range(12):
        graph.chunk(text, i, f"part {i}", f"summary {i}", embedding=near(0.95 - i / 50, away=40 + i))
    half = retrieved("xyzzy?", Q, limits=TINY)

    with contextlib.ExitStack() as swapped:
        full = [
            swapped.enter_context(full_precision_index(db, table, column)) for table, column in FULL_PRECISION
        ]
        scans = index_scans_of_a_retrieval(database_url, "xyzzy?", Q, TINY, full)
        again = retrieved("xyzzy?", Q, limits=TINY)

    assert [name for name in full if scans[name] == 0] == []
    assert (again.similarity_seeds, again.edges, again.passages, again.search_paths) == (
        half.similarity_seeds,
        half.edges,
        half.passages,
        half.search_paths,
    )
    assert half.passages and half.edges
    assert half.similarity_seeds == people[:10]


# --- users, datasets, round trips -----------------------------------------------------------------


def test_retrieval_never_reads_another_users_data(db):
    theirs = Graph(db, "u2")
    alice = theirs.entity("Alice", "person", "engineer", embedding=Q)
    theirs.edge(alice, theirs.entity("Acme", "organization", embedding=None), "works_at", embedding=Q)
    mine = Graph(db, "u1")
    bob = mine.entity("Bob", embedding=None)

    context = retrieved("Where does Alice work?", Q)

    assert [e.id for e in context.entities] == [bob]  # the fallback of u1's own graph
    assert context.edges == []
    with pytest.raises(NotFound):
        retrieved("Where does Alice work?", Q, user_id="u3")


def test_only_the_named_dataset_is_searched(db):
    Graph(db, "u1", "work").entity("Alice", embedding=Q)
    main = Graph(db, "u1", "main")

    assert retrieved("Alice?", Q).entities == []
    assert main.dataset_id == retrieved("Alice?", Q).dataset_id


def test_the_whole_retrieval_takes_at_most_2_sql_round_trips_on_a_warm_connection(db):
    graph = Graph(db)
    alice = graph.entity("Alice", embedding=near(0.9, away=1))
    graph.edge(
        alice, graph.entity("Acme", "organization", embedding=None), "works_at", embedding=near(0.9, away=2)
    )
    text = graph.text("a long text")
    graph.chunk(text, 0, "Alice joined Acme", "summary", embedding=near(0.9, away=3))

    retrieved_pipelined("Where does Alice work?", Q)  # the plans and caches warm too
    with counting_round_trips(this_thread_only=True) as counted:
        context = retrieved_pipelined("Where does Alice work?", Q)

    assert context.edges and context.passages
    # BEGIN and the user with the keyword statement; the context statement with COMMIT
    assert counted.count <= 2, counted.statements

    with counting_round_trips(this_thread_only=True) as counted:
        ranked = retrieved_pipelined("Where does Alice work?", Q, retrieval="ranked")
    assert ranked.edges and counted.count <= 2, counted.statements  # the ranked context: the same


def test_the_question_is_embedded_while_the_keyword_search_runs(db, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from gligabao.db import graph_reads
    from gligabao.memory.retrieval import retrieve

    Graph(db).entity("Alice", embedding=None)
    keyword_search_started = threading.Event()
    original = graph_reads.send_keyword_seeds

    def send_keyword_seeds(*args, **kwargs):
        keyword_search_started.set()
        return original(*args, **kwargs)

    monkeypatch.setattr(graph_reads, "send_keyword_seeds", send_keyword_seeds)

    def embed() -> list[float]:
        # A provider call still in flight when the keyword search starts (it would time out
        # here if the search waited for the embedding).
        assert keyword_search_started.wait(timeout=10)
        return Q

    with ThreadPoolExecutor(1) as pool, bootstrap.bundle().database.transaction("u1", "main") as uow:
        context = retrieve(uow, "main", "Where does Alice work?", pool.submit(embed), DEFAULT_LIMITS)

    assert context.keyword_seeds


def test_what_needs_no_vector_is_sent_before_the_questions_embedding_is_awaited(db):
    """The keyword statement and the check for series travel before the retrieval waits for the
    question's embedding; after it, only the context statement (issue 56, point 5)."""
    graph = Graph(db)
    graph.entity("Paris", "place", "a city", embedding=None, updated_at=T0)
    sent_before: list[str] = []
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        recording = RecordingConnection(uow.conn)

        def embedding() -> list[float]:
            sent_before.extend(str(query) for query, _ in recording.sent)
            return basis(NOWHERE)

        retrieve(replace(uow, conn=recording), "main", "Paris?", embedding, DEFAULT_LIMITS)
    assert len(sent_before) == 2 and any("gb_series" in query for query in sent_before)
    assert len(recording.sent) == 3 and "gb_series" not in str(recording.sent[-1][0])
