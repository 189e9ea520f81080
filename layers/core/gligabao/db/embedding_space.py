"""The embedder whose vectors a database holds (gb_embedding_space, migration 0044), checked
before a local API serves it: a database whose vectors another embedder made is refused, since
comparing vectors of two embedders ranks by noise.

A database with no vector yet takes the configured embedder; one made before the record existed
is taken to hold the configured embedder's (the only one it could have used).
"""

from __future__ import annotations

import psycopg
from psycopg.rows import tuple_row

VECTOR_TABLES = ("gb_artifacts", "gb_entities", "gb_edges")


class EmbeddingSpaceMismatch(RuntimeError):
    """The database's vectors were made by another embedder than the configured one."""


def check_embedding_space(conn: psycopg.Connection, embedder: str) -> None:
    """Record `embedder` as the database's, or raise EmbeddingSpaceMismatch when it holds vectors
    of another. As the tables' owner, in one transaction (two serves starting at once agree)."""
    with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        cur.execute("LOCK TABLE gb_embedding_space IN EXCLUSIVE MODE")
        row = cur.execute("SELECT embedder FROM gb_embedding_space").fetchone()
        recorded = row[0] if row else None
        if recorded == embedder:
            return
        if recorded is not None and _holds_vectors(cur):
            raise EmbeddingSpaceMismatch(
                f"this database's vectors were made by {recorded}, and the configured embeddings are "
                f"{embedder}: their vectors cannot be compared. Set the embeddings back (GB_EMBEDDING_PROVIDER, "
                "OPENAI_API_KEY), or use another database (GB_DATA_DIR or DATABASE_URL) for the new ones"
            )
        cur.execute(
            "INSERT INTO gb_embedding_space (embedder) VALUES (%s)"
            " ON CONFLICT (only_row) DO UPDATE SET embedder = EXCLUDED.embedder, recorded_at = now()",
            (embedder,),
        )


def _holds_vectors(cur: psycopg.Cursor) -> bool:
    # Read as the owner, which row-level security does not hold: every user's rows count.
    checks = " OR ".join(
        f"EXISTS (SELECT 1 FROM {table} WHERE embedding IS NOT NULL)" for table in VECTOR_TABLES
    )
    return bool(cur.execute(f"SELECT {checks}").fetchone()[0])  # the tables' names: no input
