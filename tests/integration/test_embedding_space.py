"""The embedder a database's vectors come from (db/embedding_space.py, migration 0044): recorded
on first use, and a database holding vectors refused to another embedder, so that retrieval never
compares vectors of two unrelated spaces (offline hashed words against OpenAI's, say)."""

from __future__ import annotations

import pytest
from conftest import reconfigure
from remember_helpers import remember

from gligabao.db.embedding_space import EmbeddingSpaceMismatch, check_embedding_space


def recorded(db) -> list[str]:
    return [row[0] for row in db.execute("SELECT embedder FROM gb_embedding_space").fetchall()]


def test_an_empty_database_takes_any_embedder_and_keeps_the_last(db):
    check_embedding_space(db, "offline:offline-hash")
    check_embedding_space(db, "openai:text-embedding-3-small")  # no vector yet: nothing to mix

    assert recorded(db) == ["openai:text-embedding-3-small"]


def test_a_database_with_vectors_refuses_another_embedder_and_changes_nothing(db, api):
    reconfigure(llm_provider="offline", embedding_provider="offline")
    check_embedding_space(db, "offline:offline-hash")
    remember(api, "Alice works at Acme.")

    with pytest.raises(EmbeddingSpaceMismatch) as refused:
        check_embedding_space(db, "openai:text-embedding-3-small")
    check_embedding_space(db, "offline:offline-hash")  # the same one: still fine

    assert str(refused.value).startswith(
        "this database's vectors were made by offline:offline-hash, and the configured embeddings are "
        "openai:text-embedding-3-small: their vectors cannot be compared."
    )
    assert recorded(db) == ["offline:offline-hash"]


def test_the_api_role_sees_no_row_of_it(db, database_url):
    import psycopg

    check_embedding_space(db, "offline:offline-hash")
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM gb_embedding_space").fetchone()[0] == 0
