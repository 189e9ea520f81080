"""The write path's statements are planned right on tables that have no statistics yet (a dataset
just imported, which autovacuum has not analyzed): each stored row is read through the index of
what the remember names (an entity's name, an entity's live edges, a triple, an id), never by
reading the dataset's rows through its index of datasets once per name or entity.

The graph is written by its owner into a database of its own, with autovacuum off on its tables so
that nothing analyzes them; the statements run as the service runs them (gligabao_app, under
row-level security), under EXPLAIN."""

from __future__ import annotations

import json
import os
import time

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from remember_helpers import chain_text, use_rule_based_model
from sql_counting import counting_round_trips, table_rows_read

from gligabao import bootstrap
from gligabao.db import graph_writes
from gligabao.memory.remember import LARGE_REMEMBER_FACTS, TextToRemember, remember_text
from gligabao.settings import Settings

ENTITIES = 3000
HUB_FACTS = 1000  # live facts about one entity (an agent's user)
OTHER_FACTS = 2000
GRAPH_TABLES = ("gb_entities", "gb_edges", "gb_artifacts", "gb_datasets", "gb_entity_recency")


@pytest.fixture(scope="module")
def unanalyzed(admin_database_url):
    """(owner URL, service URL, dataset id) of a database whose graph was never analyzed."""
    from gligabao.db.connection import Database
    from gligabao.db.migrate import APP_ROLE, ensure_schema

    name = f"gligabao_unanalyzed_{os.getpid()}"
    params = conninfo_to_dict(admin_database_url)
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    owner_url = make_conninfo(**{**params, "dbname": name})
    schema = Database(lambda: owner_url)
    ensure_schema(schema, Settings().embedding_dimensions)
    schema.close()
    with psycopg.connect(owner_url, autocommit=True) as conn:
        for table in GRAPH_TABLES:
            conn.execute(
                sql.SQL("ALTER TABLE {} SET (autovacuum_enabled = false)").format(sql.Identifier(table))
            )
        dataset_id = conn.execute(
            "INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'default') RETURNING id"
        ).fetchone()[0]
        conn.execute(
            """INSERT INTO gb_entities (dataset_id, name, normalized_name, type)
               SELECT %s, 'Person ' || i, 'person ' || i, 'person' FROM generate_series(1, %s) AS i""",
            [dataset_id, ENTITIES],
        )
        # The first entity is in HUB_FACTS facts; the others' facts are spread among them all. Each
        # fact has a vector, which fills most of its row's page (migration 0013), as stored facts do.
        conn.execute(
            """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, embedding)
               SELECT %(ds)s, CASE WHEN i <= %(hub)s THEN 1 ELSE 2 + i %% (%(n)s - 1) END,
                      2 + (i * 7) %% (%(n)s - 1), 'knows', 'fact ' || i,
                      array_fill(1 + i %% 7, ARRAY[%(dims)s])::vector
               FROM generate_series(1, %(hub)s + %(other)s) AS i""",
            {
                "ds": dataset_id,
                "hub": HUB_FACTS,
                "other": OTHER_FACTS,
                "n": ENTITIES,
                "dims": Settings().embedding_dimensions,
            },
        )
        unanalyzed_tables = conn.execute(
            "SELECT count(*) FROM pg_stats WHERE tablename = ANY(%s)", [list(GRAPH_TABLES)]
        ).fetchone()[0]
        assert unanalyzed_tables == 0, "the tables have statistics: the test would prove nothing"
    service_url = make_conninfo(**{**params, "dbname": name, "user": APP_ROLE})
    yield owner_url, service_url, dataset_id
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


class Explaining:
    """A connection for graph_writes whose statements are only explained (no rows come back)."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self.plans: list[dict] = []

    def cursor(self, row_factory=None):
        return self

    def execute(self, query, params=None):
        [(plan,)] = self.conn.execute("EXPLAIN (FORMAT JSON) " + query, params).fetchall()
        self.plans.append(plan[0]["Plan"])
        return self

    def fetchall(self):
        return []

    def fetchone(self):
        return None


def explained(service_url: str, run) -> list[dict]:
    """The plan nodes of the statements `run(conn)` sends, as user u1 of the service."""
    from gligabao.db.connection import register_vector

    with psycopg.connect(service_url) as conn:
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        explaining = Explaining(conn)
        run(explaining)
        conn.rollback()
    return [node for plan in explaining.plans for node in _nodes(plan)]


def _nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _vector(axis: int) -> list[float]:
    vector = [0.0] * Settings().embedding_dimensions
    vector[axis] = 1.0
    return vector


def _indexes(nodes: list[dict]) -> set[str]:
    return {node["Index Name"] for node in nodes if "Index Name" in node}


def _scans_filtering_by(nodes: list[dict], relation: str, column: str) -> list[dict]:
    """The scans of `relation` that filter each row they read by `column` (not an index condition)."""
    return [
        node for node in nodes if node.get("Relation Name") == relation and column in node.get("Filter", "")
    ]


def test_the_candidate_facts_are_read_through_each_entitys_live_edges(unanalyzed):
    _, service_url, dataset_id = unanalyzed
    nodes = explained(
        service_url,
        lambda conn: graph_writes.candidate_edges(
            conn,
            dataset_id,
            [1, 2, 3],
            [_vector(0), _vector(1)],
            threshold=0.75,
            limit=50,
            per_entity=1000,
            exact_max=1000,
        ),
    )
    assert any(node.get("Function Name") == "gb_live_edges_around" for node in nodes)
    assert not _scans_filtering_by(nodes, "gb_edges", "source_id"), json.dumps(nodes)[:2000]
    assert not _scans_filtering_by(nodes, "gb_edges", "target_id")
    names_read = [node.get("Index Name") for node in nodes if node.get("Relation Name") == "gb_entities"]
    assert names_read and set(names_read) == {"gb_entities_pkey"}


def test_the_newest_live_edges_around_an_entity_are_walked_newest_first(unanalyzed):
    owner_url, service_url, dataset_id = unanalyzed
    indexes = ["gb_edges_live_source", "gb_edges_live_target", "gb_edges_live_dataset", "gb_edges_fact"]
    with psycopg.connect(service_url) as conn:
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        around = conn.execute("SELECT gb_live_edges_around(%s, '{1,2}', 10)", [dataset_id]).fetchall()
        scans = dict(
            conn.execute(
                "SELECT name, pg_stat_get_xact_numscans(name::regclass) FROM unnest(%s::text[]) AS name",
                [indexes],
            ).fetchall()
        )
        conn.rollback()
    with psycopg.connect(owner_url) as owner:
        newest = owner.execute(
            """SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY k, e ORDER BY created_at DESC, id DESC) AS n
                               FROM gb_edges, unnest('{1,2}'::bigint[]) AS k, unnest('{s,t}'::text[]) AS e
                               WHERE expired_at IS NULL AND (CASE e WHEN 's' THEN source_id ELSE target_id END) = k) AS r
               WHERE n <= 10"""
        ).fetchall()
    assert sorted(row[0] for row in around) == sorted(row[0] for row in newest)
    assert scans["gb_edges_live_source"] > 0 and scans["gb_edges_live_target"] > 0
    assert scans["gb_edges_live_dataset"] == scans["gb_edges_fact"] == 0


def test_the_match_reads_each_name_through_the_names_index_and_each_triple_through_its_own(unanalyzed):
    _, service_url, dataset_id = unanalyzed
    names = ["person 1", "person 2", "person 9999"]
    nodes = explained(
        service_url,
        lambda conn: graph_writes.known_entities_and_fact_edges(
            conn,
            dataset_id,
            names,
            [_vector(i) for i in range(len(names))],
            0.75,
            [(0, 1, "knows"), (1, 2, "knows")],
            exact_max=1000,
            walk=64,
        ),
    )
    # the names are looked up by gb_entities_of_names (migration 0037), with the owner's rights: no
    # node of the statement reads gb_entities but by primary key, where row-level security's
    # condition on the dataset beside the statement's made the planner read the dataset's entities
    # for each name
    assert "gb_entities_of_names" in {n.get("Function Name") for n in nodes}
    assert {n.get("Index Name") for n in nodes if n.get("Relation Name") == "gb_entities"} <= {
        "gb_entities_pkey"
    }
    assert "gb_edges_fact" in _indexes(nodes)
    assert "gb_edges_live_dataset" not in _indexes(nodes)
    assert "gb_edges_dataset" not in _indexes(nodes)


def test_the_history_of_the_facts_is_read_by_their_ends_and_their_edges_ids(unanalyzed):
    """The read a store plans from (db/fact_history.py): each fact's edges by gb_edges_fact, their
    statements and judgements by their edge, never a scan of the dataset's rows."""
    _, service_url, dataset_id = unanalyzed
    names = ["person 1", "person 2", "person 9999"]

    def read(conn):
        cursor = graph_writes.send_match_and_history(
            conn,
            dataset_id,
            names,
            [_vector(i) for i in range(len(names))],
            0.75,
            [(0, 1, "knows"), (1, 2, "knows")],
            [1, 2],
            exact_max=1000,
            walk=64,
        )
        cursor.fetchone()

    nodes = explained(service_url, read)
    indexes = _indexes(nodes)
    assert {"gb_edges_fact", "gb_edge_statements_edge", "gb_edge_conflicts_edge"} <= indexes
    assert not indexes & {"gb_edges_dataset", "gb_edges_live_dataset"}
    assert not [
        n
        for n in nodes
        if n.get("Node Type") == "Seq Scan" and n.get("Relation Name", "").startswith("gb_edge")
    ]


def test_the_names_are_found_by_their_key_within_the_users_dataset_only(unanalyzed):
    from gligabao.db.connection import register_vector

    _, service_url, dataset_id = unanalyzed
    names = ["person 1", "person 2", "person 3", "person 9999"]
    vectors = [_vector(i) for i in range(len(names))]
    with psycopg.connect(service_url, row_factory=dict_row) as conn:
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        mine = graph_writes.match_entities(conn, dataset_id, names, vectors, 0.75, exact_max=1000, walk=64)
        read = table_rows_read(conn, "gb_entities")
        conn.execute("SELECT set_config('gligabao.user_id', 'u2', true)")
        anothers = graph_writes.match_entities(
            conn, dataset_id, names, vectors, 0.75, exact_max=1000, walk=64
        )
        conn.rollback()

    assert mine[:3] == [1, 2, 3] and mine[3] is None
    assert read <= 2 * len(names)  # a probe a name (and the guard's candidates), not 3,000 a name
    assert anothers == [None] * len(names)


# --- a large remember, and a window of texts, analyze what changed enough (last in the file: the
# tables of the database above have statistics after it)


def test_the_stale_tables_are_analyzed_by_the_service_and_only_once(unanalyzed):
    owner_url, service_url, _ = unanalyzed
    with psycopg.connect(owner_url, autocommit=True) as owner:
        for _ in range(100):  # the loading connection's counters reach the statistics when it ends
            changed = owner.execute(
                "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'gb_edges'"
            ).fetchone()[0]
            if changed >= HUB_FACTS + OTHER_FACTS:
                break
            time.sleep(0.1)
        with psycopg.connect(service_url) as conn:
            first = graph_writes.send_analyze_stale_tables(conn).fetchone()[0]
            conn.commit()
            again = graph_writes.send_analyze_stale_tables(conn).fetchone()[0]
            conn.commit()
        analyzed = owner.execute(
            "SELECT count(*) FROM pg_stats WHERE tablename = 'gb_edges' AND attname = 'source_id'"
        ).fetchone()[0]
    assert "gb_edges" in first  # 3,000 rows changed
    assert "gb_entities" in first  # 3,000
    assert "gb_entity_recency" in first  # 3,000 entities' recency (gb_entity_recency), kept by triggers
    assert analyzed == 1
    assert again == []


@pytest.fixture
def rule_based(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)


def remembered_statements(text: str) -> list[str]:
    with counting_round_trips() as round_trips:
        remember_text(bootstrap.bundle(), TextToRemember(user_id="u1", dataset="d", text=text))
    return round_trips.statements


def analyzing_statements(text: str) -> int:
    return sum("gb_analyze_stale_graph" in statement for statement in remembered_statements(text))


def test_a_large_remember_analyzes_and_a_small_one_does_not(db, rule_based):
    assert analyzing_statements(chain_text(LARGE_REMEMBER_FACTS - 1)) == 0
    assert analyzing_statements(chain_text(LARGE_REMEMBER_FACTS, start=100)) == 1


def test_the_analysis_is_sent_before_the_store_asks_for_the_datasets_lock(db, rule_based):
    """An analysis in the store's transaction held the dataset's lock through it: every other store
    of the dataset waited 120-240 ms more (bench/reference_load.py)."""
    remembered_statements(chain_text(1))
    statements = remembered_statements(chain_text(LARGE_REMEMBER_FACTS, start=100))
    analysis = next(i for i, s in enumerate(statements) if "gb_analyze_stale_graph" in s)
    lock = next(i for i, s in enumerate(statements) if "FOR NO KEY UPDATE" in s)
    assert analysis < lock
