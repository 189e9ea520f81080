"""The queries of the remember path: artifacts, entities, edges and their links.

Each function is one SQL statement, whatever the number of rows: rows travel as arrays
and are expanded with unnest, so a remember costs the same round trips for 1 fact or 50.
Every query is filtered by the dataset: an id that a model or a caller names can never
reach another dataset's rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from pgvector import Vector
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from gligabao.db import fact_history
from gligabao.db.jobs import NOT_CANCELLED, NOT_QUEUED
from gligabao.model import StoredEdge, StoredEntity


@dataclass(frozen=True)
class ChunkRow:
    text: str
    summary: str | None
    embedding: Sequence[float] | None
    summary_embedding: Sequence[float] | None


# The chunks of the artifact the statement's `parent` CTE wrote (id, session_id, memory_kind), and the ids of
# both: shared by a remember's insert and an asynchronous remember's fill of its pending artifact.
_CHUNKS_OF_PARENT = """
        chunks AS (
            INSERT INTO gb_artifacts (dataset_id, kind, text, session_id, reference_time, parent_id,
                                      chunk_index, summary, embedding, summary_embedding, memory_kind,
                                      metadata)
            SELECT %(dataset_id)s, 'chunk', c.text, parent.session_id, %(reference_time)s, parent.id,
                   c.ord - 1, c.summary, c.embedding, c.summary_embedding, parent.memory_kind, parent.metadata
            FROM parent,
                 unnest(%(chunk_text)s::text[], %(summary)s::text[], %(embedding)b::vector[],
                        %(summary_embedding)b::vector[]) WITH ORDINALITY AS c(text, summary, embedding,
                                                                             summary_embedding, ord)
            RETURNING id, chunk_index
        )
        SELECT (SELECT id FROM parent) AS id, (SELECT created_at FROM parent) AS created_at,
               coalesce((SELECT array_agg(id ORDER BY chunk_index) FROM chunks), '{}') AS chunk_ids
        """


def _chunk_parameters(chunks: Sequence[ChunkRow]) -> dict:
    return {
        "chunk_text": [c.text for c in chunks],
        "summary": [c.summary for c in chunks],
        "embedding": [_vector(c.embedding) for c in chunks],
        "summary_embedding": [_vector(c.summary_embedding) for c in chunks],
    }


@dataclass(frozen=True)
class Derivation:
    """What a text remember derived was made from: the series an observation describes, the
    artifact of the remember that made it, a web search's sources ({url, title} each)."""

    derived_from: int | None = None
    series_id: int | None = None
    sources: tuple[Mapping[str, str], ...] | None = None


def send_insert_artifacts(
    conn: psycopg.Connection,
    dataset_id: int,
    *,
    text: str,
    session_id: str | None,
    reference_time: datetime,
    chunks: Sequence[ChunkRow],
    kind: str = "text",
    content_sha256: str | None = None,
    memory_kind: str = "knowledge",
    metadata: Mapping[str, object] | None = None,
    derivation: Derivation | None = None,
) -> psycopg.Cursor:
    """The text's artifact and its chunks' (kind 'chunk', parent the text, its memory_kind); an
    image's artifact is kind 'image', its text the description, its `content_sha256` the image's.
    `derivation`: what a derived text (an observation of a series, a web search's findings) was
    made from.
    The result is read later (`read_artifacts`: text id, chunk ids in order, creation time): in
    pipeline mode the statement travels
    with the next one whose result is read."""
    return conn.execute(
        """
        WITH parent AS (
            INSERT INTO gb_artifacts (dataset_id, kind, text, session_id, reference_time, content_sha256,
                                      memory_kind, metadata, series_id, derived_from, sources)
            VALUES (%(dataset_id)s, %(kind)s, %(text)s, %(session_id)s, %(reference_time)s,
                    coalesce(%(content_sha256)s::text, encode(sha256(convert_to(%(text)s, 'UTF8')), 'hex')),
                    %(memory_kind)s, %(metadata)s, %(series_id)s, %(derived_from)s, %(sources)s)
            RETURNING id, session_id, created_at, memory_kind, metadata
        ),
        """
        + _CHUNKS_OF_PARENT,
        {
            "dataset_id": dataset_id,
            "kind": kind,
            "memory_kind": memory_kind,
            "metadata": Jsonb(dict(metadata or {})),
            "series_id": derivation.series_id if derivation else None,
            "derived_from": derivation.derived_from if derivation else None,
            "sources": Jsonb(list(derivation.sources))
            if derivation and derivation.sources is not None
            else None,
            "content_sha256": content_sha256,
            "text": text,
            "session_id": session_id,
            "reference_time": reference_time,
            **_chunk_parameters(chunks),
        },
    )


def read_artifacts(cursor: psycopg.Cursor) -> tuple[int, list[int], datetime]:
    row = cursor.fetchone()
    return row["id"], list(row["chunk_ids"]), row["created_at"]


def fill_pending_artifact(
    conn: psycopg.Connection,
    dataset_id: int,
    artifact_id: int,
    *,
    reference_time: datetime,
    chunks: Sequence[ChunkRow],
) -> tuple[list[int], datetime] | None:
    """What `send_insert_artifacts` stores, into the pending artifact of an asynchronous remember: marks
    it done and inserts its chunks, in one statement; its chunks' ids and creation time (when the
    remember was accepted), or None when it is done already (another delivery
    of the same job stored it) or gone: the caller then stores nothing."""
    return read_filled_artifact(
        send_fill_pending_artifact(
            conn, dataset_id, artifact_id, reference_time=reference_time, chunks=chunks
        )
    )


def send_fill_pending_artifact(
    conn: psycopg.Connection,
    dataset_id: int,
    artifact_id: int,
    *,
    reference_time: datetime,
    chunks: Sequence[ChunkRow],
) -> psycopg.Cursor:
    """`fill_pending_artifact`'s statement, its result read later (`read_filled_artifact`)."""
    return conn.execute(
        """
        WITH parent AS (
            UPDATE gb_artifacts
            SET status = 'done', error = NULL, reference_time = %(reference_time)s,
                content_sha256 = encode(sha256(convert_to(text, 'UTF8')), 'hex')
            WHERE id = %(artifact_id)s AND dataset_id = %(dataset_id)s AND kind IN ('text', 'facts')
              AND status <> 'done' AND """
        + NOT_CANCELLED.format(a="")
        + """
            RETURNING id, session_id, created_at, memory_kind, metadata
        ),
        """
        + _CHUNKS_OF_PARENT,
        {
            "not_queued": NOT_QUEUED,
            "dataset_id": dataset_id,
            "artifact_id": artifact_id,
            "reference_time": reference_time,
            **_chunk_parameters(chunks),
        },
    )


def read_filled_artifact(cursor: psycopg.Cursor) -> tuple[list[int], datetime] | None:
    row = cursor.fetchone()
    return None if row["id"] is None else (list(row["chunk_ids"]), row["created_at"])


def _nearest_first(select: str, column: str, to: str, limit: str, rows: str, walk: str) -> str:
    """`select` (a SELECT ... WHERE ...) in the order of its `column`'s distance to `to`, its first
    `limit` rows, when `rows` (FROM ... WHERE ..., the rows `select` reads) are at most
    `%(exact_max)s`: compared by the full vectors, whose cosines a sort computes. Else `walk` (a
    SELECT of the same columns from one of the query's `gb_nearest_*` functions, which walk the
    index with sorts off). Only one of the two branches runs.

    In one statement the planner would choose between walking the half-precision index and
    sorting the rows in its order, which scales and halves every row's vector for every search
    (the candidate facts of 50 new facts among 990 live ones: 597 ms sorted, 69.5 walked, 82.0 by
    the full vectors; bench/fact_candidates.py)."""
    small = f"(SELECT count(*) <= %(exact_max)s FROM (SELECT 1 FROM {rows} LIMIT %(exact_max)s + 1) AS r)"
    return f"""(
            ({select}
              AND {small}
            ORDER BY {column} <=> {to} LIMIT {limit})
            UNION ALL
            (SELECT * FROM ({walk}) AS walked WHERE NOT {small}))"""


# The stored entity each (name, vector) of `i` is: the same normalized name, else the nearest
# vector whose cosine is at least the threshold, among the entities whose name could be the same
# (one name a short form of the other: migration 0011, found by the name keys of migration 0015)
# unless `name_guard` is off (then among all the dataset's entities); rows with neither are left out.
#
# The write path's statements are shaped so that their plan is the same with statistics and without
# (a dataset just imported, which autovacuum has not analyzed yet): each stored row is reached from
# the new ids or triples, one lookup each, in a LATERAL subquery that `OFFSET 0` keeps the planner
# from flattening, and the dataset is checked on the rows found, outside it. A table without
# statistics looks like a few rows, and row-level security's condition on the dataset (migration
# 0003) beside the statement's own made the dataset's index look the most selective: the planner read
# all the dataset's rows through it, once per new name or entity (docs/performance.md, "The write
# path as the graph grows"). Inside, that condition of row-level security is the only one on the
# dataset, and the lookup's own index (an id's, a triple's) is the cheaper.
#
# A name is the exception: it is looked up within its dataset, by the unique key (dataset_id,
# normalized_name), in gb_entities_of_names (migration 0037). Looked up alone it read every dataset's
# entity of that name (each user's "Alice"): 25-40 ms of a remember of 10 facts beside 170 small
# datasets (bench/overhead.py); looked up here, beside row-level security's condition on the
# dataset, every entity of the dataset for each name when the tables had no statistics.
_MATCH_TEMPLATE = """
        SELECT i.ord, coalesce(by_name.id, by_vector.id) AS id
        FROM unnest(%(names)s::text[], %(embeddings)b::vector[]) WITH ORDINALITY AS i(normalized_name, embedding, ord)
        LEFT JOIN gb_entities_of_names(%(dataset_id)s, %(names)s::text[]) AS by_name(ord, id) ON by_name.ord = i.ord
        LEFT JOIN LATERAL {nearest} by_vector ON true
        WHERE by_name.id IS NOT NULL OR by_vector.id IS NOT NULL
"""
_MATCH_CANDIDATES = """
            SELECT e.id
            FROM {candidates}
            WHERE by_name.id IS NULL AND e.dataset_id = %(dataset_id)s AND e.embedding IS NOT NULL
              AND 1 - (e.embedding <=> i.embedding) >= %(threshold)s
              {name_guard}"""
_GUARDED_CANDIDATES = _MATCH_CANDIDATES.format(
    candidates="""unnest(gb_entities_could_be(%(dataset_id)s, i.normalized_name)) AS c(id)
                 CROSS JOIN LATERAL (SELECT * FROM gb_entities e WHERE e.id = c.id OFFSET 0) e""",
    name_guard="AND gb_could_be_one_entity(e.normalized_name, i.normalized_name)",
)
_MATCH_SQL = {
    # The few entities the name keys find: compared exactly.
    True: _MATCH_TEMPLATE.format(
        nearest=f"({_GUARDED_CANDIDATES} ORDER BY e.embedding <=> i.embedding LIMIT 1)"
    ),
    # All the dataset's entities: compared exactly in a small dataset, else through the index.
    False: _MATCH_TEMPLATE.format(
        nearest=_nearest_first(
            _MATCH_CANDIDATES.format(candidates="gb_entities e", name_guard=""),
            "e.embedding",
            "i.embedding",
            "1",
            "gb_entities WHERE dataset_id = %(dataset_id)s",
            """SELECT w.id FROM gb_nearest_entities(i.embedding, %(walk)s) AS w
            WHERE by_name.id IS NULL AND w.dataset_id = %(dataset_id)s AND 1 - w.distance >= %(threshold)s
            ORDER BY w.distance LIMIT 1""",
        )
    ),
}


def _match_parameters(
    dataset_id: int,
    normalized_names: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    threshold: float,
    exact_max: int,
    walk: int,
) -> dict:
    return {
        "dataset_id": dataset_id,
        "names": list(normalized_names),
        "embeddings": [_vector(e) for e in embeddings],
        "threshold": threshold,
        "exact_max": exact_max,
        "walk": walk,
    }


def match_entities(
    conn: psycopg.Connection,
    dataset_id: int,
    normalized_names: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    threshold: float,
    name_guard: bool = True,
    *,
    exact_max: int,
    walk: int,
) -> list[int | None]:
    """For each name (with its vector), the id of the stored entity it is: same normalized name,
    else the nearest vector when its cosine is at least `threshold` and (with `name_guard`) the
    names could be one entity's (one a short form of the other); None when neither. Without the
    guard, a dataset of at most `exact_max` entities is compared exactly, a larger one through an
    index walk of `walk` candidates."""
    rows = conn.execute(
        _MATCH_SQL[name_guard],
        _match_parameters(dataset_id, normalized_names, embeddings, threshold, exact_max, walk),
    ).fetchall()
    matches: list[int | None] = [None] * len(normalized_names)
    for row in rows:
        matches[row["ord"] - 1] = row["id"]
    return matches


def known_entities_and_fact_edges(
    conn: psycopg.Connection,
    dataset_id: int,
    normalized_names: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    threshold: float,
    fact_ends: Sequence[tuple[int, int, str]],
    name_guard: bool = True,
    *,
    exact_max: int,
    walk: int,
) -> tuple[list[int | None], list[StoredEdge]]:
    """`match_entities` and, in the same statement, the edges (live or not) of the facts between
    matched entities: `fact_ends` are (source, target, relation), source and target as positions in
    `normalized_names`. (matches as match_entities returns them, the edges by id)."""
    rows = conn.execute(
        f"""
        WITH matched AS MATERIALIZED ({_MATCH_SQL[name_guard]}),
        {_FACTS_OF_MATCHED}
        SELECT m.ord, m.id AS match_id, NULL::bigint AS id, NULL::bigint AS source_id, NULL::bigint AS target_id,
               NULL AS source, NULL AS target, NULL AS relation, NULL AS description, NULL::bigint AS artifact_id,
               NULL::timestamptz AS valid_at, NULL::timestamptz AS invalid_at, NULL::timestamptz AS created_at,
               NULL::timestamptz AS expired_at, NULL::text AS model_id
        FROM matched m
        UNION ALL
        SELECT NULL, NULL, {_NAMED_EDGE_COLUMNS}
        FROM fact_triple triple
        CROSS JOIN LATERAL ({_EDGES_OF_TRIPLE.format(triple="triple")}) e
        WHERE e.dataset_id = %(dataset_id)s
        """,
        {
            **_match_parameters(dataset_id, normalized_names, embeddings, threshold, exact_max, walk),
            **_fact_end_parameters(fact_ends),
        },
    ).fetchall()
    matches: list[int | None] = [None] * len(normalized_names)
    edges = []
    for row in rows:
        if row["ord"] is not None:
            matches[row["ord"] - 1] = row["match_id"]
        else:
            edges.append(
                StoredEdge(**{name: value for name, value in row.items() if name not in ("ord", "match_id")})
            )
    return matches, sorted(edges, key=lambda edge: edge.id)


# The (source_id, target_id, relation) of each fact of `fact_source`, `fact_target` (positions in
# the names matched) and `fact_relation` whose ends are both stored entities (`matched`).
_FACTS_OF_MATCHED = """fact_triple AS (
            SELECT DISTINCT s.id AS source_id, t.id AS target_id, f.relation
            FROM unnest(%(fact_source)s::int[], %(fact_target)s::int[], %(fact_relation)s::text[])
                 AS f(source_ord, target_ord, relation)
            JOIN matched s ON s.ord = f.source_ord
            JOIN matched t ON t.ord = f.target_ord
        )"""


def _fact_end_parameters(fact_ends: Sequence[tuple[int, int, str]]) -> dict:
    return {
        "fact_source": [end[0] + 1 for end in fact_ends],
        "fact_target": [end[1] + 1 for end in fact_ends],
        "fact_relation": [end[2] for end in fact_ends],
    }


def send_match_and_history(
    conn: psycopg.Connection,
    dataset_id: int,
    normalized_names: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    threshold: float,
    fact_ends: Sequence[tuple[int, int, str]],
    judged_edge_ids: Sequence[int],
    name_guard: bool = True,
    *,
    exact_max: int,
    walk: int,
) -> psycopg.Cursor:
    """`match_entities` and, in the same statement, the history (db/fact_history.py) of the
    facts between matched entities (`fact_ends` as `known_entities_and_fact_edges` takes them) and
    of the facts of `judged_edge_ids`: read with `read_match_and_history`."""
    history, columns = fact_history.history_sql("fact_triple", "%(judged)s::bigint[]")
    return conn.execute(
        f"""
        WITH matched AS MATERIALIZED ({_MATCH_SQL[name_guard]}),
        {_FACTS_OF_MATCHED},
        {history}
        SELECT (SELECT coalesce(array_agg(m.ord ORDER BY m.ord), '{{}}') FROM matched m) AS matched_ords,
               (SELECT coalesce(array_agg(m.id ORDER BY m.ord), '{{}}') FROM matched m) AS matched_ids,
               {columns}
        """,
        {
            **_match_parameters(dataset_id, normalized_names, embeddings, threshold, exact_max, walk),
            **_fact_end_parameters(fact_ends),
            "judged": list(judged_edge_ids),
        },
    )


def read_match_and_history(
    cursor: psycopg.Cursor, names: int
) -> tuple[list[int | None], fact_history.History]:
    """(the stored entity each name is, as match_entities returns them; the history read)."""
    row = cursor.fetchone()
    matches: list[int | None] = [None] * names
    for ord_, entity_id in zip(row["matched_ords"], row["matched_ids"], strict=True):
        matches[ord_ - 1] = entity_id
    return matches, fact_history.read_history(row)


@dataclass(frozen=True)
class EntityRow:
    """An entity to store: `matched_id` set for a stored one (updated), else created by name."""

    matched_id: int | None
    name: str
    normalized_name: str
    type: str
    description: str
    embedding: Sequence[float]


def upsert_entities(
    conn: psycopg.Connection, dataset_id: int, entities: Sequence[EntityRow], model_id: str | None = None
) -> list[StoredEntity]:
    """Update the matched entities (fill an empty description or an unknown type, bump updated_at)
    and insert the others, upserting on (dataset_id, normalized_name) so that a concurrent
    creation of the same name ends in one row. Rows are written in normalized-name order, the
    same in every transaction, so concurrent upserts wait for each other instead of deadlocking.

    `model_id`, the model that extracted them, is stored with the entities created (a stored
    entity keeps the model that first extracted it). Returns one entity per input, in input order.
    """
    return send_upsert_entities(conn, dataset_id, entities, model_id).fetchall()


def send_upsert_entities(
    conn: psycopg.Connection, dataset_id: int, entities: Sequence[EntityRow], model_id: str | None = None
) -> psycopg.Cursor[StoredEntity]:
    """`upsert_entities`'s statement, its rows read later (`fetchall()`)."""
    cursor = conn.cursor(row_factory=class_row(StoredEntity))
    return cursor.execute(
        """
        WITH input AS (
            SELECT * FROM unnest(%(matched_id)s::bigint[], %(name)s::text[], %(normalized_name)s::text[],
                                 %(type)s::text[], %(description)s::text[], %(embedding)b::vector[])
                     WITH ORDINALITY AS i(matched_id, name, normalized_name, type, description, embedding, ord)
        ),
        revectored AS (
            UPDATE gb_entities e
            SET description = CASE WHEN e.description = '' THEN i.description ELSE e.description END,
                type = CASE WHEN e.type = 'unknown' THEN i.type ELSE e.type END,
                embedding = i.embedding,
                updated_at = now()
            FROM input i
            WHERE e.id = i.matched_id AND e.dataset_id = %(dataset_id)s
              AND (e.embedding IS NULL OR (e.description = '' AND i.description <> ''))
            RETURNING i.ord, e.id, e.name, e.type, e.description, e.model_id, false AS created
        ),
        -- The vector is not assigned at all here: even assigned its own value through the join, it
        -- would count as changed, and the touch would not be a HOT update (migration 0009).
        touched AS (
            UPDATE gb_entities e
            SET description = CASE WHEN e.description = '' THEN i.description ELSE e.description END,
                type = CASE WHEN e.type = 'unknown' THEN i.type ELSE e.type END,
                updated_at = now()
            FROM input i
            WHERE e.id = i.matched_id AND e.dataset_id = %(dataset_id)s
              AND NOT (e.embedding IS NULL OR (e.description = '' AND i.description <> ''))
            RETURNING i.ord, e.id, e.name, e.type, e.description, e.model_id, false AS created
        ),
        updated AS (
            SELECT * FROM revectored UNION ALL SELECT * FROM touched
        ),
        inserted AS (
            INSERT INTO gb_entities AS e (dataset_id, name, normalized_name, type, description, embedding,
                                          model_id)
            SELECT %(dataset_id)s, name, normalized_name, type, description, embedding, %(model_id)s::text
            FROM input WHERE matched_id IS NULL
            ORDER BY normalized_name
            ON CONFLICT (dataset_id, normalized_name) DO UPDATE
            SET description = CASE WHEN e.description = '' THEN EXCLUDED.description ELSE e.description END,
                type = CASE WHEN e.type = 'unknown' THEN EXCLUDED.type ELSE e.type END,
                embedding = CASE WHEN e.embedding IS NULL OR (e.description = '' AND EXCLUDED.description <> '')
                                 THEN EXCLUDED.embedding ELSE e.embedding END,
                updated_at = now()
            RETURNING e.normalized_name, e.id, e.name, e.type, e.description, e.model_id,
                      (e.xmax = 0) AS created
        )
        SELECT id, name, type, description, model_id, created
        FROM (SELECT ord, id, name, type, description, model_id, created FROM updated
              UNION ALL
              SELECT i.ord, n.id, n.name, n.type, n.description, n.model_id, n.created
              FROM inserted n JOIN input i ON i.matched_id IS NULL AND i.normalized_name = n.normalized_name) AS stored
        ORDER BY ord
        """,
        {
            "dataset_id": dataset_id,
            "model_id": model_id,
            "matched_id": [e.matched_id for e in entities],
            "name": [e.name for e in entities],
            "normalized_name": [e.normalized_name for e in entities],
            "type": [e.type for e in entities],
            "description": [e.description for e in entities],
            "embedding": [_vector(e.embedding) for e in entities],
        },
    )


# An edge's columns with its endpoints' names, each name read by its entity's id (a join could read
# the dataset's entities for each edge when the table has no statistics).
_NAMED_EDGE_COLUMNS = """e.id, e.source_id, e.target_id,
               (SELECT s.name FROM gb_entities s WHERE s.id = e.source_id) AS source,
               (SELECT t.name FROM gb_entities t WHERE t.id = e.target_id) AS target,
               e.relation, e.description, e.artifact_id, e.valid_at, e.invalid_at, e.created_at, e.expired_at,
               e.model_id"""

# Every edge of one (source_id, target_id, relation) of `{triple}`, live or not, through gb_edges_fact
# (migration 0042); the caller checks their dataset.
_EDGES_OF_TRIPLE = """SELECT * FROM gb_edges g
                   WHERE g.source_id = {triple}.source_id AND g.relation = {triple}.relation
                     AND g.target_id = {triple}.target_id
                   OFFSET 0"""

# The edge of each id of `{ids}` (its `id` column), by its primary key; the caller checks its dataset.
_EDGE_OF_ID = "SELECT * FROM gb_edges g WHERE g.id = {ids}.id OFFSET 0"


# The `%(limit)s` live edges of the dataset nearest to `n.embedding`, as remember's candidate-fact
# search reads them (bench/query.py times it as it is).
NEAREST_LIVE_EDGES = _nearest_first(
    """
                SELECT id, embedding <=> n.embedding AS distance
                FROM gb_edges
                WHERE dataset_id = %(dataset_id)s AND expired_at IS NULL AND embedding IS NOT NULL""",
    "embedding",
    "n.embedding",
    "%(limit)s",
    "gb_edges WHERE dataset_id = %(dataset_id)s AND expired_at IS NULL",
    """SELECT w.id, w.distance FROM gb_nearest_edges(n.embedding, %(limit)s) AS w
                WHERE w.dataset_id = %(dataset_id)s AND w.expired_at IS NULL""",
)


def candidate_edges(
    conn: psycopg.Connection,
    dataset_id: int,
    entity_ids: Sequence[int],
    embeddings: Sequence[Sequence[float]],
    *,
    threshold: float,
    limit: int,
    per_entity: int,
    exact_max: int,
    exclude_ids: Sequence[int] = (),
) -> list[StoredEdge]:
    """The live edges new facts may repeat or contradict: those around these entities (the newest
    `per_entity` at each end of each) and those whose vector has a cosine of at least `threshold`
    with one of `embeddings` (compared exactly in a dataset of at most `exact_max` live edges, else
    through an index walk of `limit` candidates); the `limit` most similar to a new fact."""
    return send_candidate_edges(
        conn,
        dataset_id,
        entity_ids,
        embeddings,
        threshold=threshold,
        limit=limit,
        per_entity=per_entity,
        exact_max=exact_max,
        exclude_ids=exclude_ids,
    ).fetchall()


def send_candidate_edges(
    conn: psycopg.Connection,
    dataset_id: int,
    entity_ids: Sequence[int],
    embeddings: Sequence[Sequence[float]],
    *,
    threshold: float,
    limit: int,
    per_entity: int,
    exact_max: int,
    exclude_ids: Sequence[int] = (),
    slots: Sequence[tuple[int, str]] = (),
) -> psycopg.Cursor[StoredEdge]:
    """`candidate_edges`'s statement, its rows read later (`fetchall()`). Each candidate is compared
    with every new fact's vector: the cap per entity keeps an entity most facts are about (the
    user an agent remembers for) from making each remember read and compare all its facts.
    `slots`: (source_id, relation) of the new facts, whose newest `limit` edges, live or not, are
    candidates too (a fact said before a stored one may contradict one superseded since)."""
    return conn.cursor(row_factory=class_row(StoredEdge)).execute(
        f"""
        WITH new_fact AS (
            SELECT embedding FROM unnest(%(embeddings)b::vector[]) AS n(embedding)
        ),
        around AS (  -- the newest live edges at each end of each entity (migration 0034)
            SELECT id
            FROM gb_live_edges_around(%(dataset_id)s::bigint, %(entity_ids)s::bigint[], %(per_entity)s::integer) AS a(id)
        ),
        near_vector AS (
            SELECT near.id
            FROM new_fact n
            CROSS JOIN LATERAL {NEAREST_LIVE_EDGES} near
            WHERE 1 - near.distance >= %(threshold)s
        ),
        slot AS (  -- the newest edges of each slot, live or not (gb_edges_fact, migration 0042)
            SELECT g.id
            FROM unnest(%(slot_source)s::bigint[], %(slot_relation)s::text[]) AS k(source_id, relation)
            CROSS JOIN LATERAL (SELECT g.id, g.dataset_id FROM gb_edges g
                                WHERE g.source_id = k.source_id AND g.relation = k.relation
                                ORDER BY g.id DESC LIMIT %(limit)s) g
            WHERE g.dataset_id = %(dataset_id)s
        ),
        candidate AS (
            SELECT id FROM around UNION SELECT id FROM near_vector UNION SELECT id FROM slot
        )
        SELECT {_NAMED_EDGE_COLUMNS}
        FROM candidate c
        CROSS JOIN LATERAL ({_EDGE_OF_ID.format(ids="c")}) e
        WHERE e.dataset_id = %(dataset_id)s AND NOT e.id = ANY(%(exclude_ids)s::bigint[])
        ORDER BY (SELECT max(1 - (e.embedding <=> n.embedding)) FROM new_fact n) DESC NULLS LAST,
                 e.created_at DESC, e.id DESC
        LIMIT %(limit)s
        """,
        {
            "dataset_id": dataset_id,
            "entity_ids": list(entity_ids),
            "embeddings": [_vector(e) for e in embeddings],
            "threshold": threshold,
            "limit": limit,
            "per_entity": per_entity,
            "exact_max": exact_max,
            "exclude_ids": list(exclude_ids),
            "slot_source": [slot[0] for slot in slots],
            "slot_relation": [slot[1] for slot in slots],
        },
    )


def link(
    conn: psycopg.Connection,
    *,
    entity_artifacts: Sequence[tuple[int, int]],
    session_id: str | None,
    session_entities: Sequence[int],
    session_edges: Sequence[int],
) -> None:
    """Provenance links (entity, artifact) and session links (entity/edge, session), idempotent. An
    edge's provenance is its statements' (db/fact_history.send_apply writes both)."""
    entity_artifacts = sorted(set(entity_artifacts))
    conn.execute(
        """
        WITH entity_artifact AS (
            INSERT INTO gb_entity_artifacts (entity_id, artifact_id)
            SELECT * FROM unnest(%(ea_entity)s::bigint[], %(ea_artifact)s::bigint[])
            ON CONFLICT DO NOTHING
        ),
        entity_session AS (
            INSERT INTO gb_entity_sessions (entity_id, session_id)
            SELECT id, %(session_id)s::text FROM unnest(%(session_entities)s::bigint[]) AS s(id)
            WHERE %(session_id)s::text IS NOT NULL
            ON CONFLICT DO NOTHING
        )
        INSERT INTO gb_edge_sessions (edge_id, session_id)
        SELECT id, %(session_id)s::text FROM unnest(%(session_edges)s::bigint[]) AS s(id)
        WHERE %(session_id)s::text IS NOT NULL
        ON CONFLICT DO NOTHING
        """,
        {
            "ea_entity": [pair[0] for pair in entity_artifacts],
            "ea_artifact": [pair[1] for pair in entity_artifacts],
            "session_id": session_id,
            "session_entities": sorted(set(session_entities)),
            "session_edges": sorted(set(session_edges)),
        },
    )


# Arrays of vectors go as %(name)b (binary): as text, every float was printed by pgvector and parsed
# back by the server, ~80 ms of a remember of 50 facts.
def _vector(values: Sequence[float] | None) -> Vector | None:
    return None if values is None else Vector(list(values))


def send_analyze_stale_tables(conn: psycopg.Connection) -> psycopg.Cursor:
    """Analyze the graph's tables that changed enough since their last analysis for autovacuum to
    analyze them (migration 0034's gb_analyze_stale_graph: the tables' owner's right, skipped when
    another session is analyzing one, never an error). Sent last in a transaction that does not hold
    the dataset's lock (a remember's or a window's read of its candidates): it sees only what was
    committed before (a transaction's own changes reach the statistics after its end), and no store
    of the dataset waits for it (an analysis took 120-240 ms at 10,000 facts, 15 times in a load of
    200 texts: bench/reference_load.py). Its result (the tables analyzed) is read with the COMMIT's
    round trip, if at all."""
    return conn.execute("SELECT gb_analyze_stale_graph() AS analyzed")
