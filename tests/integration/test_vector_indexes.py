"""Remember's vector searches read the half-precision indexes of migration 0019, or the
full-precision ones a large table keeps until they are rebuilt by hand, and find the same rows."""

from __future__ import annotations

import re

import psycopg
from graph_rows import full_precision_index
from psycopg.rows import dict_row
from query_helpers import Graph
from remember_helpers import unit, with_cosine
from sql_counting import table_rows_read

from gligabao.db import graph_writes
from gligabao.db.connection import register_vector
from gligabao.limits import DEFAULT_LIMITS
from gligabao.settings import Settings


def remember_searches(database_url: str, dataset_id: int, indexes: list[str]) -> tuple[list, list, dict]:
    """The candidate facts and the entity matched (name guard off) for a new fact at unit(0), with
    the planner left no other way to order rows by distance than an index (on tables as small as
    these it would rather sort them, which proves nothing about the index); and how many times
    each of `indexes` was scanned, read on a connection of its own. The dataset is searched as one
    larger than the datasets compared exactly (`exact_max` 0)."""
    with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            conn.execute(f"SET LOCAL {setting} = off")
        candidates = graph_writes.candidate_edges(
            conn, dataset_id, [], [unit(0)], threshold=0.5, limit=3, per_entity=1000, exact_max=0
        )
        matched = graph_writes.match_entities(
            conn, dataset_id, ["nobody"], [unit(0)], threshold=0.5, name_guard=False, exact_max=0, walk=64
        )
        scans = "SELECT pg_stat_get_xact_numscans(%s::regclass) AS n"
        return (
            [edge.id for edge in candidates],
            matched,
            {name: conn.execute(scans, [name]).fetchone()["n"] for name in indexes},
        )


def test_the_searches_of_remember_read_whichever_index_the_table_has_and_find_the_same_rows(db, database_url):
    graph = Graph(db)
    people = [graph.entity(f"Person {i}", embedding=with_cosine(0.9 - i / 20)) for i in range(6)]
    facts = [
        graph.edge(people[i], people[(i + 1) % 6], "knows", embedding=with_cosine(0.95 - i / 20))
        for i in range(6)
    ]
    half_indexes = ["gb_edges_embedding_half", "gb_entities_embedding_half"]

    half = remember_searches(database_url, graph.dataset_id, half_indexes)
    with (
        full_precision_index(db, "gb_edges", "embedding") as edges,
        full_precision_index(db, "gb_entities", "embedding") as entities,
    ):
        full = remember_searches(database_url, graph.dataset_id, [edges, entities])

    assert half[:2] == full[:2] == (facts[:3], [people[0]])
    assert half[2] == {name: 1 for name in half_indexes}  # one new fact, one new name: one scan each
    assert full[2] == {"gb_edges_embedding": 1, "gb_entities_embedding": 1}


def gated_branches_that_ran(conn, query, params) -> list[bool]:
    """For each branch of `query` behind a one-time filter (the gate on the dataset's size), whether
    it ran: EXPLAIN ANALYZE of the statement as sent."""
    plan = conn.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) " + query, params)
    ran = []

    def walk(node: dict) -> None:
        # on the size's subquery (an InitPlan's output: `$1` up to PostgreSQL 16, `(InitPlan 1).col1`
        # since 17), not on by_name
        if re.search(r"\$\d|\(InitPlan \d+\)", node.get("One-Time Filter", "")):
            gated = [child for child in node.get("Plans", []) if child["Parent Relationship"] != "InitPlan"]
            ran.append(any(child["Actual Loops"] > 0 for child in gated))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan.fetchone()["QUERY PLAN"][0]["Plan"])
    return ran


def test_only_one_of_the_two_orders_of_a_remember_search_runs(db, database_url, monkeypatch):
    """A dataset of at most `exact_max` rows is ordered by the full vectors, which a sort compares by
    their cosines alone; a larger one is walked through its index by the query's gb_nearest_* functions
    (sorted in the half-precision order, it would scale and halve every row's vector for every new
    fact: 50 new facts among 990 live ones took 597 ms against 52, bench/fact_candidates.py). The
    other branch is planned and never run."""
    graph = Graph(db)
    alice, bob = graph.entity("Alice", embedding=with_cosine(0.9)), graph.entity("Bob", embedding=unit(2))
    graph.edge(alice, bob, "knows", embedding=with_cosine(0.95))
    sent = []
    execute = psycopg.Cursor.execute

    def recording(cursor, query, params=None, **kwargs):
        if "gb_nearest_" in str(query):
            sent.append((query, params))
        return execute(cursor, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    found = []
    with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        for exact_max in (0, 1, 1000):  # the dataset holds one live fact and two entities
            edges = graph_writes.candidate_edges(
                conn,
                graph.dataset_id,
                [],
                [unit(0), unit(1)],
                threshold=0.5,
                limit=3,
                per_entity=1000,
                exact_max=exact_max,
            )
            matched = graph_writes.match_entities(
                conn,
                graph.dataset_id,
                ["carol", "dave"],
                [unit(0), unit(1)],
                threshold=0.5,
                name_guard=False,
                exact_max=exact_max,
                walk=DEFAULT_LIMITS.hnsw_candidates,
            )
            found.append(([edge.id for edge in edges], matched))
        monkeypatch.undo()
        ran = [gated_branches_that_ran(conn, query, params) for query, params in sent]

    exact, walked = [True, False], [False, True]
    # Per exact_max, the candidate facts then the entity match (2 entities: 1 is less, 1000 more).
    assert ran == [walked, walked, exact, walked, exact, exact]
    assert found[0] == found[1] == found[2] != ([], [None, None])


def test_a_vector_beyond_what_half_precision_holds_is_stored_and_found_through_the_index(db, database_url):
    """An embeddings reply may hold any finite float32 (test_provider_faults reads one of 3.4e38s),
    and halfvec holds at most 65,504: the indexes hold each vector scaled to length 1, so such a
    vector is stored (a remember is not failed by it) and searched like any other."""
    graph = Graph(db)
    large = [1e5 * x for x in with_cosine(0.9)]
    people = [graph.entity("Person 0", embedding=large), graph.entity("Person 1", embedding=unit(2))]
    fact = graph.edge(people[0], people[1], "knows", embedding=[1e5 * x for x in with_cosine(0.95)])
    half_indexes = ["gb_edges_embedding_half", "gb_entities_embedding_half"]

    assert remember_searches(database_url, graph.dataset_id, half_indexes) == (
        [fact],
        [people[0]],
        {name: 1 for name in half_indexes},
    )


def test_a_half_precision_index_left_invalid_by_a_failed_build_is_ignored(db, database_url):
    """A concurrent build that failed or was cancelled leaves an invalid index (README "Rebuilding
    the vector indexes"), which the planner never reads: the searches keep to the full-precision one."""
    graph = Graph(db)
    people = [graph.entity(f"Person {i}", embedding=with_cosine(0.9 - i / 20)) for i in range(3)]
    fact = graph.edge(people[0], people[1], "knows", embedding=with_cosine(0.95))
    size = Settings().embedding_dimensions

    with (
        full_precision_index(db, "gb_edges", "embedding") as edges,
        full_precision_index(db, "gb_entities", "embedding") as entities,
    ):
        invalid = [(f"{edges}_half", "gb_edges"), (f"{entities}_half", "gb_entities")]
        try:
            for name, table in invalid:
                db.execute(
                    f"CREATE INDEX {name} ON {table} USING hnsw ((l2_normalize(embedding)::halfvec({size})) "
                    "halfvec_cosine_ops)"
                )
                db.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [name])
            searched = remember_searches(database_url, graph.dataset_id, [edges, entities])
        finally:
            for name, _ in invalid:
                db.execute(f"DROP INDEX IF EXISTS {name}")

    assert searched == ([fact], [people[0]], {edges: 1, entities: 1})


def test_the_facts_around_an_entity_most_facts_are_about_are_compared_newest_first_up_to_the_cap(
    db, database_url
):
    # An agent's user is in most of its facts: each remember compared every one of them with every
    # new fact (580 ms for 50 new facts at 20,000 such facts, bench/fact_candidates.py). Now the
    # newest `per_entity` at each end are, and an older fact is a candidate through its vector only.
    from datetime import UTC, datetime, timedelta

    graph = Graph(db)
    user = graph.entity("The user", embedding=unit(5))
    things = [graph.entity(f"Thing {i}", embedding=unit(6)) for i in range(12)]
    day = datetime(2026, 1, 1, tzinfo=UTC)
    likes = [
        graph.edge(user, things[i], "likes", created_at=day + timedelta(days=i), embedding=unit(10 + i))
        for i in range(10)
    ]
    liked_by = [
        graph.edge(things[i], user, "likes", created_at=day + timedelta(days=i), embedding=unit(30 + i))
        for i in range(10)
    ]
    old_but_similar = graph.edge(user, things[10], "lives_in", created_at=day, embedding=with_cosine(0.9))

    def candidates(per_entity: int) -> set[int]:
        with psycopg.connect(database_url) as conn, conn.transaction():
            register_vector(conn)
            conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
            edges = graph_writes.candidate_edges(
                conn,
                graph.dataset_id,
                [user],
                [unit(0)],
                threshold=0.75,
                limit=50,
                per_entity=per_entity,
                exact_max=DEFAULT_LIMITS.exact_scan_max_rows,
            )
        return {edge.id for edge in edges}

    assert candidates(1000) == {*likes, *liked_by, old_but_similar}
    assert candidates(3) == {*likes[-3:], *liked_by[-3:], old_but_similar}


def test_the_facts_new_facts_restate_are_read_by_their_ends_and_relation(db, database_url):
    graph = Graph(db)
    user = graph.entity("The user", embedding=unit(5))
    things = [graph.entity(f"Thing {i}", embedding=unit(6)) for i in range(12)]
    for thing in things:  # the user holds 360 facts, each thing 30
        for verb in ["likes", *(f"mentioned_{n}" for n in range(29))]:
            graph.edge(user, thing, verb, embedding=unit(7))
    db.execute("ANALYZE gb_edges")
    names = ["the user", "thing 3", "thing 7", "thing 11"]

    with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        matches, live = graph_writes.known_entities_and_fact_edges(
            conn,
            graph.dataset_id,
            names,
            [unit(5), unit(6), unit(6), unit(6)],
            0.75,
            [(0, i, "likes") for i in (1, 2, 3)],
            exact_max=DEFAULT_LIMITS.exact_scan_max_rows,
            walk=DEFAULT_LIMITS.hnsw_candidates,
        )
        read = table_rows_read(conn, "gb_edges")

    assert matches == [user, things[3], things[7], things[11]]
    assert [(edge.source_id, edge.target_id) for edge in live] == [(user, things[i]) for i in (3, 7, 11)]
    assert read < 30, read  # 90 (each thing's 30 facts) without an index of the facts' ends
