"""The history of facts as stored (migration 0042): the reads that a change of facts decides from,
and the writes of its plan (memory/history.py decides, memory/fact_plan.py plans).

- `send_history`: the edges of the facts named (by their ends and relation, or by one of their
  edges), the judgements about those facts, the edges of the facts those judgements name, and
  the statements of all of them: one statement, its rows read with the round trip of a later one.
- `send_new_edge_ids`: ids for the edges a plan creates, from the edges' own sequence.
- `send_apply`: the plan's writes, every one sent without reading a result (they share the round
  trip of the COMMIT in pipeline mode).

Every statement is filtered by the dataset, whatever row-level security does besides. Each stored
row is reached from the ids or facts named, one lookup each, in a LATERAL subquery kept apart with
`OFFSET 0` (db/graph_writes.py says why: the same plan with statistics and without).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from pgvector import Vector


@dataclass(frozen=True)
class HistoryEdge:
    """An edge of a fact the change touches, as stored, with its endpoints' names."""

    id: int
    source_id: int
    target_id: int
    relation: str
    source: str
    target: str
    description: str
    artifact_id: int | None
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    superseded_by: int | None
    model_id: str | None


@dataclass(frozen=True)
class StatementRow:
    """A statement as stored, to store (`id` None: new) or to change (its edge, how far it holds)."""

    id: int | None
    edge_id: int
    artifact_id: int | None
    kind: str
    valid_at: datetime | None
    invalid_at: datetime | None
    said_at: datetime
    ends_at: datetime | None  # None: open, or nowhere (an unknown start, cut)
    cut: bool
    cut_by: int | None


@dataclass(frozen=True)
class HistoryConflict:
    id: int
    edge_id: int
    other_edge_id: int
    contradicts: bool
    said_at: datetime


@dataclass(frozen=True)
class History:
    edges: list[HistoryEdge]
    statements: list[StatementRow]
    conflicts: list[HistoryConflict]


# `{facts}`: a CTE of (source_id, target_id, relation); `{edge_ids}`: an expression of bigint[].
_HISTORY = """
named_fact AS (
    SELECT source_id, target_id, relation FROM {facts}
    UNION
    SELECT g.source_id, g.target_id, g.relation
    FROM unnest({edge_ids}) AS i(id)
    CROSS JOIN LATERAL (SELECT * FROM gb_edges g WHERE g.id = i.id OFFSET 0) g
    WHERE g.dataset_id = %(dataset_id)s
),
named_edge AS MATERIALIZED (
    SELECT g.id
    FROM named_fact f
    CROSS JOIN LATERAL (SELECT * FROM gb_edges g
                        WHERE g.source_id = f.source_id AND g.relation = f.relation AND g.target_id = f.target_id
                        OFFSET 0) g
    WHERE g.dataset_id = %(dataset_id)s
),
judgement AS MATERIALIZED (
    SELECT c.* FROM named_edge n
    CROSS JOIN LATERAL (SELECT * FROM gb_edge_conflicts c WHERE c.edge_id = n.id OFFSET 0) c
    WHERE c.dataset_id = %(dataset_id)s
    UNION
    SELECT c.* FROM named_edge n
    CROSS JOIN LATERAL (SELECT * FROM gb_edge_conflicts c WHERE c.other_edge_id = n.id OFFSET 0) c
    WHERE c.dataset_id = %(dataset_id)s
),
judged_fact AS (
    SELECT g.source_id, g.target_id, g.relation
    FROM (SELECT edge_id AS id FROM judgement UNION SELECT other_edge_id FROM judgement) AS j
    CROSS JOIN LATERAL (SELECT * FROM gb_edges g WHERE g.id = j.id OFFSET 0) g
    WHERE g.dataset_id = %(dataset_id)s
),
history_edge AS MATERIALIZED (
    SELECT id FROM named_edge
    UNION
    SELECT g.id
    FROM (SELECT DISTINCT * FROM judged_fact) AS f
    CROSS JOIN LATERAL (SELECT * FROM gb_edges g
                        WHERE g.source_id = f.source_id AND g.relation = f.relation AND g.target_id = f.target_id
                        OFFSET 0) g
    WHERE g.dataset_id = %(dataset_id)s
),
history_edges AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'id', e.id, 'source_id', e.source_id, 'target_id', e.target_id, 'relation', e.relation,
               'source', (SELECT s.name FROM gb_entities s WHERE s.id = e.source_id),
               'target', (SELECT t.name FROM gb_entities t WHERE t.id = e.target_id),
               'description', e.description, 'artifact_id', e.artifact_id, 'valid_at', e.valid_at,
               'invalid_at', e.invalid_at, 'created_at', e.created_at, 'expired_at', e.expired_at,
               'superseded_by', e.superseded_by, 'model_id', e.model_id) ORDER BY e.id), '[]') AS rows
    FROM history_edge h
    CROSS JOIN LATERAL (SELECT * FROM gb_edges e WHERE e.id = h.id OFFSET 0) e
    WHERE e.dataset_id = %(dataset_id)s
),
history_statements AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'id', s.id, 'edge_id', s.edge_id, 'artifact_id', s.artifact_id, 'kind', s.kind,
               'valid_at', s.valid_at, 'invalid_at', s.invalid_at, 'said_at', s.said_at,
               'ends_at', s.ends_at, 'cut', s.cut, 'cut_by', s.cut_by) ORDER BY s.id), '[]') AS rows
    FROM history_edge h
    CROSS JOIN LATERAL (SELECT * FROM gb_edge_statements s WHERE s.edge_id = h.id OFFSET 0) s
    WHERE s.dataset_id = %(dataset_id)s
),
history_conflicts AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'id', c.id, 'edge_id', c.edge_id, 'other_edge_id', c.other_edge_id,
               'contradicts', c.contradicts, 'said_at', c.said_at) ORDER BY c.id), '[]') AS rows
    FROM judgement c
)"""

_HISTORY_COLUMNS = """(SELECT rows FROM history_edges) AS history_edges,
       (SELECT rows FROM history_statements) AS history_statements,
       (SELECT rows FROM history_conflicts) AS history_conflicts"""


def send_history(
    conn: psycopg.Connection,
    dataset_id: int,
    facts: Sequence[tuple[int, int, str]],
    edge_ids: Sequence[int] = (),
) -> psycopg.Cursor:
    """The history of these facts ((source_id, target_id, relation)) and of the facts of these
    edges: read with `read_history(cursor.fetchone())`."""
    return conn.execute(
        f"""
        WITH given_fact AS (
            SELECT * FROM unnest(%(source_id)s::bigint[], %(target_id)s::bigint[], %(relation)s::text[])
                     AS f(source_id, target_id, relation)
        ),
        {_HISTORY.format(facts="given_fact", edge_ids="%(edge_ids)s::bigint[]")}
        SELECT {_HISTORY_COLUMNS}
        """,
        {
            "dataset_id": dataset_id,
            "source_id": [f[0] for f in facts],
            "target_id": [f[1] for f in facts],
            "relation": [f[2] for f in facts],
            "edge_ids": list(edge_ids),
        },
    )


def history_sql(facts_cte: str, edge_ids: str) -> tuple[str, str]:
    """The CTEs of a history read after `facts_cte` (a CTE of (source_id, target_id, relation)),
    and the columns that select it (`read_history` reads them), for a statement that reads more."""
    return _HISTORY.format(facts=facts_cte, edge_ids=edge_ids), _HISTORY_COLUMNS


def read_history(row: dict) -> History:
    return History(
        [
            HistoryEdge(**_times(e, "valid_at", "invalid_at", "created_at", "expired_at"))
            for e in row["history_edges"]
        ],
        [
            StatementRow(**_times(s, "valid_at", "invalid_at", "said_at", "ends_at"))
            for s in row["history_statements"]
        ],
        [HistoryConflict(**_times(c, "said_at")) for c in row["history_conflicts"]],
    )


def _times(item: dict, *names: str) -> dict:
    for name in names:
        if item[name] is not None:
            item[name] = datetime.fromisoformat(item[name])
    return item


def send_new_edge_ids(conn: psycopg.Connection, count: int) -> psycopg.Cursor:
    """`count` ids for new edges (read with `fetchall()`, in order)."""
    return conn.execute(
        "SELECT nextval('public.gb_edges_id_seq') AS id FROM generate_series(1, %(count)s) ORDER BY 1",
        {"count": count},
    )


@dataclass(frozen=True)
class NewEdge:
    """An edge the plan creates, with its sentence, artifact and model as the plan decided them
    (a piece split off a stored edge has that edge's); its vector is `embedding`, or that of the
    stored edge `vector_of`, copied by the database."""

    id: int
    source_id: int
    target_id: int
    relation: str
    description: str
    artifact_id: int | None
    embedding: Sequence[float] | None
    model_id: str | None
    valid_at: datetime | None
    invalid_at: datetime | None
    expired_at: datetime | None
    superseded_by: int | None
    vector_of: int | None = None


@dataclass(frozen=True)
class EdgePeriod:
    """A stored edge's period and supersession as the plan leaves them."""

    id: int
    valid_at: datetime | None
    invalid_at: datetime | None
    expired_at: datetime | None
    superseded_by: int | None


@dataclass(frozen=True)
class ConflictRow:
    edge_id: int
    other_edge_id: int
    contradicts: bool
    said_at: datetime


@dataclass(frozen=True)
class Writes:
    new_edges: Sequence[NewEdge] = ()
    periods: Sequence[EdgePeriod] = ()
    statements: Sequence[StatementRow] = ()
    conflicts: Sequence[ConflictRow] = ()
    edge_artifacts: Sequence[tuple[int, int]] = ()  # provenance the statements moved to their edges


def send_apply(conn: psycopg.Connection, dataset_id: int, writes: Writes) -> None:
    """Send the plan's writes (their results unread): the new edges, then the stored edges'
    periods, the statements and the judgements, each one statement whatever its number of rows."""
    if writes.new_edges:
        _send_new_edges(conn, dataset_id, writes.new_edges)
    if writes.periods:
        _send_periods(conn, dataset_id, writes.periods)
    new = [s for s in writes.statements if s.id is None]
    if new:
        _send_new_statements(conn, dataset_id, new)
    changed = [s for s in writes.statements if s.id is not None]
    if changed:
        _send_changed_statements(conn, dataset_id, changed)
    if writes.conflicts:
        _send_conflicts(conn, dataset_id, writes.conflicts)
    if writes.edge_artifacts:
        pairs = sorted(set(writes.edge_artifacts))
        conn.execute(
            """
            INSERT INTO gb_edge_artifacts (edge_id, artifact_id)
            SELECT * FROM unnest(%(edge_id)s::bigint[], %(artifact_id)s::bigint[])
            ON CONFLICT DO NOTHING
            """,
            {"edge_id": [p[0] for p in pairs], "artifact_id": [p[1] for p in pairs]},
        )


def _send_new_edges(conn: psycopg.Connection, dataset_id: int, edges: Sequence[NewEdge]) -> None:
    # A piece split off a stored edge takes that edge's vector: copied in SQL, never sent back and
    # forth. Inserted before the periods are written: a superseded_by can name one of them.
    conn.execute(
        """
        INSERT INTO gb_edges (id, dataset_id, source_id, target_id, relation, description, artifact_id,
                              valid_at, invalid_at, expired_at, embedding, model_id)
        OVERRIDING SYSTEM VALUE
        SELECT n.id, %(dataset_id)s, n.source_id, n.target_id, n.relation, n.description, n.artifact_id,
               n.valid_at, n.invalid_at, n.expired_at, coalesce(l.embedding, n.embedding), n.model_id
        FROM unnest(%(id)s::bigint[], %(source_id)s::bigint[], %(target_id)s::bigint[], %(relation)s::text[],
                    %(description)s::text[], %(artifact_id)s::bigint[], %(valid_at)s::timestamptz[],
                    %(invalid_at)s::timestamptz[], %(expired_at)s::timestamptz[], %(embedding)b::vector[],
                    %(model_id)s::text[], %(vector_of)s::bigint[])
             AS n(id, source_id, target_id, relation, description, artifact_id, valid_at, invalid_at,
                  expired_at, embedding, model_id, vector_of)
        LEFT JOIN LATERAL (SELECT l.embedding FROM gb_edges l
                           WHERE l.id = n.vector_of AND l.dataset_id = %(dataset_id)s OFFSET 0) l ON true
        ORDER BY n.id
        """,
        {
            "dataset_id": dataset_id,
            "id": [e.id for e in edges],
            "source_id": [e.source_id for e in edges],
            "target_id": [e.target_id for e in edges],
            "relation": [e.relation for e in edges],
            "description": [e.description for e in edges],
            "artifact_id": [e.artifact_id for e in edges],
            "valid_at": [e.valid_at for e in edges],
            "invalid_at": [e.invalid_at for e in edges],
            "expired_at": [e.expired_at for e in edges],
            "embedding": [None if e.embedding is None else Vector(list(e.embedding)) for e in edges],
            "model_id": [e.model_id for e in edges],
            "vector_of": [e.vector_of for e in edges],
        },
    )
    superseded = [e for e in edges if e.superseded_by is not None]
    if superseded:  # after the insert: the superseder may be another new edge
        _send_periods(
            conn,
            dataset_id,
            [EdgePeriod(e.id, e.valid_at, e.invalid_at, e.expired_at, e.superseded_by) for e in superseded],
        )


def _send_periods(conn: psycopg.Connection, dataset_id: int, periods: Sequence[EdgePeriod]) -> None:
    conn.execute(
        """
        UPDATE gb_edges e
        SET valid_at = p.valid_at, invalid_at = p.invalid_at, expired_at = p.expired_at,
            superseded_by = p.superseded_by
        FROM unnest(%(id)s::bigint[], %(valid_at)s::timestamptz[], %(invalid_at)s::timestamptz[],
                    %(expired_at)s::timestamptz[], %(superseded_by)s::bigint[])
             AS p(id, valid_at, invalid_at, expired_at, superseded_by)
        WHERE e.id = p.id AND e.dataset_id = %(dataset_id)s
        """,
        {
            "dataset_id": dataset_id,
            "id": [p.id for p in periods],
            "valid_at": [p.valid_at for p in periods],
            "invalid_at": [p.invalid_at for p in periods],
            "expired_at": [p.expired_at for p in periods],
            "superseded_by": [p.superseded_by for p in periods],
        },
    )


def _statement_parameters(statements: Sequence[StatementRow]) -> dict:
    return {
        "id": [s.id for s in statements],
        "edge_id": [s.edge_id for s in statements],
        "artifact_id": [s.artifact_id for s in statements],
        "kind": [s.kind for s in statements],
        "valid_at": [s.valid_at for s in statements],
        "invalid_at": [s.invalid_at for s in statements],
        "said_at": [s.said_at for s in statements],
        "ends_at": [s.ends_at for s in statements],
        "cut": [s.cut for s in statements],
        "cut_by": [s.cut_by for s in statements],
    }


def _send_new_statements(
    conn: psycopg.Connection, dataset_id: int, statements: Sequence[StatementRow]
) -> None:
    conn.execute(
        """
        INSERT INTO gb_edge_statements (dataset_id, edge_id, artifact_id, kind, valid_at, invalid_at,
                                        said_at, ends_at, cut, cut_by)
        SELECT %(dataset_id)s, edge_id, artifact_id, kind, valid_at, invalid_at, said_at, ends_at, cut, cut_by
        FROM unnest(%(edge_id)s::bigint[], %(artifact_id)s::bigint[], %(kind)s::text[],
                    %(valid_at)s::timestamptz[], %(invalid_at)s::timestamptz[], %(said_at)s::timestamptz[],
                    %(ends_at)s::timestamptz[], %(cut)s::boolean[], %(cut_by)s::bigint[]) WITH ORDINALITY
             AS s(edge_id, artifact_id, kind, valid_at, invalid_at, said_at, ends_at, cut, cut_by, ord)
        ORDER BY ord
        """,
        {"dataset_id": dataset_id, **_statement_parameters(statements)},
    )


def _send_changed_statements(
    conn: psycopg.Connection, dataset_id: int, statements: Sequence[StatementRow]
) -> None:
    conn.execute(
        """
        UPDATE gb_edge_statements s
        SET edge_id = c.edge_id, ends_at = c.ends_at, cut = c.cut, cut_by = c.cut_by
        FROM unnest(%(id)s::bigint[], %(edge_id)s::bigint[], %(ends_at)s::timestamptz[], %(cut)s::boolean[],
                    %(cut_by)s::bigint[]) AS c(id, edge_id, ends_at, cut, cut_by)
        WHERE s.id = c.id AND s.dataset_id = %(dataset_id)s
        """,
        {"dataset_id": dataset_id, **_statement_parameters(statements)},
    )


def _send_conflicts(conn: psycopg.Connection, dataset_id: int, conflicts: Sequence[ConflictRow]) -> None:
    conn.execute(
        """
        INSERT INTO gb_edge_conflicts (dataset_id, edge_id, other_edge_id, contradicts, said_at)
        SELECT %(dataset_id)s, * FROM unnest(%(edge_id)s::bigint[], %(other_edge_id)s::bigint[],
                                            %(contradicts)s::boolean[], %(said_at)s::timestamptz[])
        """,
        {
            "dataset_id": dataset_id,
            "edge_id": [c.edge_id for c in conflicts],
            "other_edge_id": [c.other_edge_id for c in conflicts],
            "contradicts": [c.contradicts for c in conflicts],
            "said_at": [c.said_at for c in conflicts],
        },
    )
