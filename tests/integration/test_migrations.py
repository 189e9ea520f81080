"""The schema of SPEC section 4, applied as versioned, idempotent migrations."""

import random

import psycopg
import pytest
from graph_rows import add_artifact, add_dataset, add_edge, add_entity, full_precision_index

from gligabao.db.migrate import (
    EmbeddingSizeChanged,
    available_migrations,
    migrate,
    stored_embedding_dimensions,
)
from gligabao.settings import Settings


def test_migrations_are_versioned_and_applying_them_again_changes_nothing(db):
    versions = [version for version, _, _ in available_migrations()]

    assert migrate(db, Settings().embedding_dimensions) == []
    recorded = [row[0] for row in db.execute("SELECT version FROM gb_schema_migrations ORDER BY version")]
    assert recorded == versions


def test_every_table_of_the_spec_exists(db):
    tables = {row[0] for row in db.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'gb\\_%'")}

    assert {
        "gb_datasets",
        "gb_artifacts",
        "gb_entities",
        "gb_edges",
        "gb_entity_artifacts",
        "gb_edge_artifacts",
        "gb_entity_sessions",
        "gb_edge_sessions",
        "gb_image_artifacts",
        "gb_inferences",
        "gb_trajectories",
        "gb_series",
        "gb_series_points",
        "gb_series_anchors",
    } <= tables


def test_the_four_vector_columns_have_hnsw_cosine_indexes_of_half_precision_vectors(db):
    indexes = {row[0] for row in db.execute("SELECT indexdef FROM pg_indexes WHERE indexdef LIKE '%hnsw%'")}
    size = Settings().embedding_dimensions

    for column in (
        f"gb_entities USING hnsw (((l2_normalize(embedding))::halfvec({size})) halfvec_cosine_ops)",
        f"gb_edges USING hnsw (((l2_normalize(embedding))::halfvec({size})) halfvec_cosine_ops)",
        f"gb_artifacts USING hnsw (((l2_normalize(embedding))::halfvec({size})) halfvec_cosine_ops)",
        f"gb_artifacts USING hnsw (((l2_normalize(summary_embedding))::halfvec({size})) halfvec_cosine_ops)",
    ):
        assert any(column in index for index in indexes), column
    assert len(indexes) == 4  # the full-precision ones are gone


def test_entity_names_are_unique_per_dataset(db):
    dataset = add_dataset(db, "u1")
    add_entity(db, dataset, "Alice")

    with pytest.raises(psycopg.errors.UniqueViolation):
        add_entity(db, dataset, "Alice")
    add_entity(db, add_dataset(db, "u1", "other"), "Alice")


def test_dataset_names_follow_the_rules_in_the_database_too(db):
    with pytest.raises(psycopg.errors.CheckViolation):
        add_dataset(db, "u1", "no spaces")


def test_deleting_an_entity_deletes_its_edges_links_and_vectors(db):
    dataset = add_dataset(db, "u1")
    artifact = add_artifact(db, dataset)
    alice = add_entity(db, dataset, "Alice", embedding=[1.0] * 1536)
    acme = add_entity(db, dataset, "Acme", "organization")
    edge = add_edge(db, dataset, alice, acme, "works_at", artifact_id=artifact, embedding=[1.0] * 1536)
    db.execute("INSERT INTO gb_entity_artifacts VALUES (%s, %s)", [alice, artifact])
    db.execute("INSERT INTO gb_edge_artifacts VALUES (%s, %s)", [edge, artifact])
    db.execute("INSERT INTO gb_entity_sessions VALUES (%s, 'a')", [alice])
    db.execute("INSERT INTO gb_edge_sessions VALUES (%s, 'a')", [edge])

    db.execute("DELETE FROM gb_entities WHERE id = %s", [alice])

    for table in (
        "gb_edges",
        "gb_entity_artifacts",
        "gb_edge_artifacts",
        "gb_entity_sessions",
        "gb_edge_sessions",
    ):
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    assert db.execute("SELECT count(*) FROM gb_artifacts").fetchone()[0] == 1


def test_relations_must_be_snake_case(db):
    dataset = add_dataset(db, "u1")
    alice, acme = add_entity(db, dataset, "Alice"), add_entity(db, dataset, "Acme")

    with pytest.raises(psycopg.errors.CheckViolation):
        add_edge(db, dataset, alice, acme, "Works At")


def test_the_embedding_size_is_the_configured_one(db):
    assert stored_embedding_dimensions(db) == Settings().embedding_dimensions


def test_another_embedding_size_fails_the_migration_with_the_reason_and_changes_nothing(db):
    stored = Settings().embedding_dimensions
    other = stored + 1  # whatever the configured size is
    before = list(db.execute("SELECT version, applied_at FROM gb_schema_migrations ORDER BY version"))

    with pytest.raises(EmbeddingSizeChanged) as raised:
        migrate(db, other)

    assert str(raised.value).startswith(
        f"the database's embeddings have {stored} dimensions but GB_EMBEDDING_DIMENSIONS "
        f"(EmbeddingDimensions) is {other}: set it back to {stored}, or use a new database"
    )
    assert list(db.execute("SELECT version, applied_at FROM gb_schema_migrations ORDER BY version")) == before
    assert stored_embedding_dimensions(db) == stored
    assert migrate(db, stored) == []  # the configured size still migrates


def test_a_new_database_has_no_embedding_size_until_migrated(admin_database_url):
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA gb_size_probe")
        try:
            conn.execute("SET search_path TO gb_size_probe")
            assert stored_embedding_dimensions(conn) is None
        finally:
            conn.execute("DROP SCHEMA gb_size_probe")


def hnsw_build_options(db) -> dict[str, list[str] | None]:
    return {
        row[0]: row[1]
        for row in db.execute(
            """SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_am am ON am.oid = c.relam
               WHERE am.amname = 'hnsw' AND c.relname LIKE 'gb\\_%'"""
        )
    }


def test_the_vector_indexes_are_built_with_ef_construction_128(db):
    assert hnsw_build_options(db) == {
        name: ["m=16", "ef_construction=128"]
        for name in (
            "gb_edges_embedding_half",
            "gb_entities_embedding_half",
            "gb_artifacts_embedding_half",
            "gb_artifacts_summary_embedding_half",
        )
    }


def test_a_table_over_50000_rows_keeps_its_full_precision_index_and_the_deploy_log_says_so(db, caplog):
    """Migration 0019 (as 0012 did): the migrate function's time holds no build of a large index.
    Migration 0012 cannot run again once 0019 has replaced the indexes it rebuilt; this is its
    test's successor. 0020 runs again after it, as it would on a database migrated for the first
    time, to replace 0019's searches again."""
    dataset = add_dataset(db, "u1")
    db.execute(
        """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description)
           SELECT %s, 'e' || i, 'e' || i, 'thing', '' FROM generate_series(1, 50001) AS i""",
        [dataset],
    )
    with full_precision_index(db, "gb_entities", "embedding"):
        db.execute("DELETE FROM gb_schema_migrations WHERE version IN (19, 20)")

        assert migrate(db, Settings().embedding_dimensions) == [
            "0019_half_precision_indexes",
            "0020_search_walks",
        ]

        assert set(hnsw_build_options(db)) == {
            "gb_entities_embedding",  # kept, with its rows
            "gb_edges_embedding_half",
            "gb_artifacts_embedding_half",
            "gb_artifacts_summary_embedding_half",
        }
        assert [
            (r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name == "gligabao.db.migrate"
        ] == [
            (
                "gligabao.db.migrate",
                "WARNING",
                "gligabao: gb_entities keeps its full-precision HNSW index gb_entities_embedding "
                "(over 50,000 rows): build gb_entities_embedding_half by hand",
            )
        ]


def test_migration_0026_repairs_the_name_functions_of_a_database_that_ran_0011_and_0015_before_it(db):
    """Their first bodies called gb_name_words and gb_is_short_form by bare name, which ANALYZE of
    gb_entities (autovacuum's always) cannot find: the functions of the name keys' index fail."""
    repair = next(text for version, _, text in available_migrations() if version == 26)
    add_entity(db, add_dataset(db, "u1"), "Acme Robotics")
    db.execute(repair.replace("public.", ""))  # as migrations 0011 and 0015 first wrote them
    db.execute("DELETE FROM gb_schema_migrations WHERE version = 26")
    try:
        db.execute("SET search_path = pg_catalog, pg_temp")
        with pytest.raises(psycopg.errors.UndefinedFunction, match="gb_name_words"):
            db.execute("ANALYZE public.gb_entities")
        db.execute("RESET search_path")

        assert migrate(db, Settings().embedding_dimensions) == ["0026_schema_qualified_names"]
    finally:
        db.execute("RESET search_path")
        migrate(db, Settings().embedding_dimensions)  # whatever happened above, the schema is whole
    db.execute("SET search_path = pg_catalog, pg_temp")
    db.execute("ANALYZE public.gb_entities")
    db.execute("RESET search_path")
    assert db.execute("SELECT gb_could_be_one_entity('acme', 'acme robotics')").fetchone()[0] is True


def toast_chunks(db, table: str) -> int:
    toast = db.execute("SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass", [table])
    return db.execute(f"SELECT count(*) FROM {toast.fetchone()[0]}").fetchone()[0]


def test_an_edge_keeps_its_vector_in_its_row_and_a_long_description_still_fits(db):
    """Migration 0013: a query's cosines on edges read no TOAST chunks (an entity's vector, whose
    row a remember touches in place, stays out of line)."""
    rng = random.Random(13)
    dataset = add_dataset(db, "u1")
    alice, acme = add_entity(db, dataset, "Alice"), add_entity(db, dataset, "Acme", "organization")
    edges_before, entities_before = toast_chunks(db, "gb_edges"), toast_chunks(db, "gb_entities")

    edge = add_edge(db, dataset, alice, acme, "works_at", embedding=[rng.uniform(-1, 1) for _ in range(1536)])
    add_entity(db, dataset, "Bob", embedding=[rng.uniform(-1, 1) for _ in range(1536)])
    db.execute(
        "UPDATE gb_edges SET description = %s WHERE id = %s",
        [" ".join(f"word{rng.randrange(10**6)}" for _ in range(3000)), edge],  # ~33 kB: no row holds it
    )

    assert toast_chunks(db, "gb_edges") > edges_before  # the description went out of line ...
    stored = db.execute(
        "SELECT pg_column_size(embedding) AS vector, length(description) AS text FROM gb_edges WHERE id = %s",
        [edge],
    ).fetchone()
    assert stored[0] == 4 * 1536 + 8 and stored[1] > 30_000
    db.execute("UPDATE gb_edges SET description = 'short' WHERE id = %s", [edge])
    assert toast_chunks(db, "gb_edges") == edges_before  # ... and the vector never did
    assert toast_chunks(db, "gb_entities") > entities_before


def test_migration_0041_keeps_the_texts_prepared_before_it_one_vector_per_row(db):
    """Prepared texts (0021) kept their vectors as a two-dimensional real[]; 0041 makes it a
    vector[] and converts the rows a batch had prepared when the deploy came."""
    from gligabao.db import prepared as prepared_rows
    from gligabao.db.connection import register_vector

    dataset = add_dataset(db, "u1")
    with_vectors, without = (
        add_artifact(db, dataset, "Alice works at Acme."),
        add_artifact(db, dataset, "Hi."),
    )
    db.execute("UPDATE gb_artifacts SET status = 'pending' WHERE dataset_id = %s", [dataset])
    db.execute("DELETE FROM gb_schema_migrations WHERE version = 41")
    try:
        db.execute("ALTER TABLE gb_prepared_texts ALTER COLUMN vectors TYPE real[] USING NULL")
        rows = [[0.25, -1.0, 3.5], [1.0, 0.0, -0.5]]
        for artifact, vectors in ((with_vectors, rows), (without, None)):
            db.execute(
                """INSERT INTO gb_prepared_texts (artifact_id, dataset_id, options, extraction, embedded, vectors)
                   VALUES (%s, %s, '{}', '{}', %s, %s::real[])""",
                [artifact, dataset, ["Alice", "Acme"] if vectors else [], vectors],
            )

        assert migrate(db, Settings().embedding_dimensions) == ["0041_prepared_vectors"]
    finally:
        migrate(db, Settings().embedding_dimensions)  # whatever happened above, the schema is whole
    register_vector(db)
    kept = prepared_rows.peek(db, [with_vectors, without])
    assert kept[with_vectors].vectors == rows and kept[with_vectors].embedded == ["Alice", "Acme"]
    assert kept[without].vectors == []
