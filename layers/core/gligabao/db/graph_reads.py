"""The retrieval SQL of query: two statements, each one round trip.

1. `keyword_seeds`: the user's dataset and its keyword seeds (run while the question is
   being embedded). It also sets `hnsw.ef_search` for the rest of the transaction.
2. `context_rows`: everything else at once: the four similarity searches, the seeds, the
   fallback, the one-hop expansion, the similar facts and the passages, as rows of one result.

Every value is a parameter (the numbers of the seed come from gligabao.limits); the SQL text is built only from the fixed fragments below.

How the similarity searches keep the per-dataset filter exact (pgvector 0.6 has no iterative
index scan: an HNSW scan returns at most `hnsw.ef_search` rows of the whole table, which
the dataset filter can then empty):
* a dataset with few rows in an index's table is scanned exactly (bounded count first);
* otherwise the HNSW index gives the table's nearest `hnsw_candidates` rows, filtered by
  dataset (and liveness); that is complete unless every candidate was still above the
  similarity threshold with fewer than the wanted matches left after the filter: only then
  could a match of this dataset lie beyond the candidates, and the exact scan runs instead.
Each part runs only when needed (one-time filters on uncorrelated sub-selects).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import psycopg
from pgvector import Vector

from gligabao.limits import DEFAULT_LIMITS


@dataclass(frozen=True)
class KeywordSeeds:
    dataset_id: int | None  # None: the user has no such dataset
    seed_ids: list[int]  # best first
    scores: list[int]


# The dataset's keys of some grams (gb_keys of migration 0002). The dataset id is an InitPlan
# parameter, not a join column: the planner then treats the gram conditions as restrictions and
# combines their index scans (BitmapOr) instead of filtering the whole dataset.
_KEYS = "gb_keys((SELECT id FROM dataset),"

# Arms of one OR of description-gram conditions at most; past it, a looser (still exact) OR is used.
MAX_DESCRIPTION_ARMS = 84


def keyword_seeds(
    conn: psycopg.Connection,
    *,
    user_id: str,
    dataset: str,
    terms: list[str],
    term_grams: list[list[str]],
    normalized_question: str,
    name_prefixes: list[str],
    limit: int,
    window: int,
    ef_search: int,
    whole_name_score: int = DEFAULT_LIMITS.whole_name_score,
    term_in_name_score: int = DEFAULT_LIMITS.term_in_name_score,
    term_in_description_score: int = DEFAULT_LIMITS.term_in_description_score,
) -> KeywordSeeds:
    """The dataset's id and its top `limit` entities by the seed's keyword score (the whole name in
    the question, each term in the name, each term in the description: the three `*_score`s), ties
    broken by the most recently updated (then the highest id). Only entities that score are seeds.

    The scores are exact; indexes only narrow which entities get scored (migration 0002):
    * the *named* ones: a term in the name (gram index) or the name in the question (prefix index);
    * the *recent* ones: the `window` most recently updated entities, all scored;
    * the *older* ones whose description holds enough terms to still make the top: an entity
      outside the window only scores by its description (`term_in_description_score` per term)
      unless it is named, so it matters only with enough terms to beat the `limit`-th best so far
      (or to tie it, when that one is an older named entity: an older entity loses every tie with
      the window, which holds the most recently updated ones). Those are found by the description
      gram index: any term, any two terms or any three terms. A term common enough to make that
      search large also fills the window with matches, which raises the number of terms needed:
      the search stays small.
    """
    params: dict[str, object] = {
        "user_id": user_id,
        "dataset": dataset,
        "ef_search": str(ef_search),
        "question": normalized_question,
        "prefixes": name_prefixes,
        "limit": limit,
        "window": window,
        "terms": len(terms),
        "whole_name_score": whole_name_score,
        "term_in_name_score": term_in_name_score,
        "term_in_description_score": term_in_description_score,
    }
    named = ["left(e.normalized_name, 6) = ANY(%(prefixes)s::text[])"]  # the gb_entities_name_prefix index
    score = [
        "CASE WHEN strpos(%(question)s, e.normalized_name) > 0 THEN %(whole_name_score)s::integer ELSE 0 END"
    ]
    for i, (term, grams) in enumerate(zip(terms, term_grams, strict=True)):
        params[f"t{i}"], params[f"g{i}"] = term, grams
        named.append(f"gb_grams(e.dataset_id, e.normalized_name) @> {_KEYS} %(g{i})s::text[])")
        score.append(
            f"CASE WHEN strpos(e.normalized_name, %(t{i})s) > 0 THEN %(term_in_name_score)s::integer ELSE 0 END"
        )
        score.append(
            f"CASE WHEN strpos(lower(e.description), %(t{i})s) > 0"
            " THEN %(term_in_description_score)s::integer ELSE 0 END"
        )
    score_sql = " + ".join(score)
    singles, pairs, triples = (_description_arms(len(terms), size) for size in (1, 2, 3))
    if len(triples) > MAX_DESCRIPTION_ARMS:
        triples = pairs  # a superset: the exact score filters it
    older = "\n            UNION ALL\n".join(
        _older_entities(arms, condition, score_sql)
        for arms, condition in ((singles, "= 1"), (pairs, "= 2"), (triples, ">= 3"))
        if arms
    )
    rows = conn.execute(
        f"""
        WITH dataset AS MATERIALIZED (
            SELECT id, set_config('hnsw.ef_search', %(ef_search)s, true) AS ef_search
            FROM gb_datasets
            WHERE user_id = %(user_id)s AND name = %(dataset)s
        ),
        named AS MATERIALIZED (
            SELECT e.id, e.updated_at, {score_sql} AS score
            FROM gb_entities AS e
            WHERE e.dataset_id = (SELECT id FROM dataset) AND ({" OR ".join(named)})
        ),
        recent AS MATERIALIZED (
            SELECT e.id, e.updated_at, {score_sql} AS score
            FROM (SELECT id, updated_at, normalized_name, description
                  FROM gb_entities
                  WHERE dataset_id = (SELECT id FROM dataset)
                  ORDER BY updated_at DESC, id DESC
                  LIMIT %(window)s) AS e
        ),
        near AS MATERIALIZED (
            SELECT id, updated_at, score, bool_or(in_window) AS in_window
            FROM (SELECT id, updated_at, score, false AS in_window FROM named
                  UNION ALL
                  SELECT id, updated_at, score, true FROM recent) AS both_kinds
            WHERE score > 0
            GROUP BY id, updated_at, score
        ),
        last_place AS MATERIALIZED (
            -- the score an older entity needs to take the last place: more than it, or as much
            -- when that one is older too (an older entity loses every tie with the window)
            SELECT score + CASE WHEN in_window THEN 1 ELSE 0 END AS to_take
            FROM near
            ORDER BY score DESC, updated_at DESC, id DESC
            OFFSET %(limit)s - 1 LIMIT 1
        ),
        needed AS MATERIALIZED (
            -- the terms an older, unnamed entity's description must hold for that score (0: none)
            SELECT CASE
                WHEN (SELECT count(*) FROM recent) < %(window)s THEN 0  -- the window held the whole dataset
                WHEN %(term_in_description_score)s::integer <= 0 THEN 0  -- a description never scores
                WHEN NOT EXISTS (SELECT 1 FROM last_place) THEN 1
                ELSE ((SELECT to_take FROM last_place) + %(term_in_description_score)s::integer - 1)
                     / %(term_in_description_score)s::integer
            END AS terms
        ),
        older AS MATERIALIZED (
            SELECT * FROM (
            {older}
            ) AS found
            WHERE (SELECT terms FROM needed) BETWEEN 1 AND %(terms)s
        ),
        candidates AS (
            SELECT id, updated_at, score FROM near
            UNION
            SELECT id, updated_at, score FROM older WHERE score > 0
        )
        SELECT d.id AS dataset_id, s.id, s.score
        FROM dataset AS d
        LEFT JOIN LATERAL (
            SELECT id, score FROM candidates
            ORDER BY score DESC, updated_at DESC, id DESC
            LIMIT %(limit)s
        ) AS s ON true
        """
        if older
        else _KEYWORD_SQL_WITHOUT_TERMS.format(named=" OR ".join(named), score=score_sql),
        params,
    ).fetchall()
    if not rows:
        return KeywordSeeds(None, [], [])
    seeds = [row for row in rows if row["id"] is not None]
    return KeywordSeeds(rows[0]["dataset_id"], [row["id"] for row in seeds], [row["score"] for row in seeds])


# Without terms, only a name inside the question scores (`whole_name_score`).
_KEYWORD_SQL_WITHOUT_TERMS = """
    WITH dataset AS MATERIALIZED (
        SELECT id, set_config('hnsw.ef_search', %(ef_search)s, true) AS ef_search
        FROM gb_datasets
        WHERE user_id = %(user_id)s AND name = %(dataset)s
    )
    SELECT d.id AS dataset_id, s.id, s.score
    FROM dataset AS d
    LEFT JOIN LATERAL (
        SELECT e.id, {score} AS score
        FROM gb_entities AS e
        WHERE e.dataset_id = (SELECT id FROM dataset) AND ({named})
          AND strpos(%(question)s, e.normalized_name) > 0 AND %(whole_name_score)s::integer > 0
        ORDER BY e.updated_at DESC, e.id DESC
        LIMIT %(limit)s
    ) AS s ON true
"""


def _description_arms(term_count: int, size: int) -> list[str]:
    """Conditions for "the description holds these `size` terms", one per combination of terms."""
    return [
        f"gb_grams(e.dataset_id, lower(e.description)) @> {_KEYS} "
        + " || ".join(f"%(g{i})s::text[]" for i in combination)
        + ")"
        for combination in itertools.combinations(range(term_count), size)
    ]


def _older_entities(arms: list[str], terms_needed: str, score_sql: str) -> str:
    """The entities whose description holds `arms`, scored, when that many terms are needed."""
    return f"""
            SELECT e.id, e.updated_at, {score_sql} AS score
            FROM gb_entities AS e
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) {terms_needed}
              AND ({" OR ".join(arms)})"""


@dataclass(frozen=True)
class _Index:
    """One of the four vector indexes of a dataset."""

    name: str
    table: str
    column: str
    take: str  # the limit's parameter name
    rows: str = ""  # which rows of the table belong to the index
    live: str = ""  # what a row must be to be retrieved


_INDEXES = (
    _Index("entities", "gb_entities", "embedding", "similar_entities"),
    _Index("edges", "gb_edges", "embedding", "similar_edges", live=" AND expired_at IS NULL"),
    _Index("chunks", "gb_artifacts", "embedding", "similar_chunks", rows=" AND kind = 'chunk'"),
    _Index("summaries", "gb_artifacts", "summary_embedding", "similar_summaries", rows=" AND kind = 'chunk'"),
)

_EXTRA_COLUMNS = {"gb_edges": ", expired_at", "gb_artifacts": ", kind", "gb_entities": ""}


def _similarity_search(index: _Index) -> str:
    """CTEs `<name>_hits(id, similarity)`, best first, and `<name>_path` (exact, hnsw or hnsw+exact)."""
    n, table, column, take = index.name, index.table, index.column, index.take
    return f"""
    {n}_small AS MATERIALIZED (
        SELECT count(*) <= %(exact_max)s AS yes
        FROM (SELECT 1 FROM {table} WHERE dataset_id = %(ds)s{index.rows} LIMIT %(exact_max)s + 1) AS s
    ),
    {n}_approx AS MATERIALIZED (
        SELECT id, dataset_id{_EXTRA_COLUMNS[table]}, {column} <=> %(q)s AS distance
        FROM {table}
        WHERE NOT (SELECT yes FROM {n}_small)
        ORDER BY {column} <=> %(q)s
        LIMIT %(candidates)s
    ),
    {n}_approx_hits AS MATERIALIZED (
        SELECT id, distance FROM {n}_approx
        WHERE dataset_id = %(ds)s{index.rows}{index.live} AND 1 - distance >= %(threshold)s
        ORDER BY distance, id
        LIMIT %({take})s
    ),
    {n}_exact_needed AS MATERIALIZED (
        SELECT (SELECT yes FROM {n}_small)
            OR ((SELECT count(*) FROM {n}_approx_hits) < %({take})s
                AND (SELECT count(*) FROM {n}_approx) >= %(candidates)s
                AND (SELECT min(1 - distance) FROM {n}_approx) >= %(threshold)s) AS yes
    ),
    {n}_exact AS MATERIALIZED (
        SELECT id, distance
        FROM (SELECT id, {column} <=> %(q)s AS distance
              FROM {table}
              WHERE dataset_id = %(ds)s AND {column} IS NOT NULL{index.rows}{index.live}
              OFFSET 0) AS scan
        WHERE (SELECT yes FROM {n}_exact_needed) AND 1 - distance >= %(threshold)s
        ORDER BY distance, id
        LIMIT %({take})s
    ),
    {n}_hits AS MATERIALIZED (
        SELECT id, 1 - distance AS similarity FROM {n}_exact WHERE (SELECT yes FROM {n}_exact_needed)
        UNION ALL
        SELECT id, 1 - distance FROM {n}_approx_hits WHERE NOT (SELECT yes FROM {n}_exact_needed)
    ),
    {n}_path AS (
        SELECT CASE WHEN (SELECT yes FROM {n}_small) THEN 'exact'
                    WHEN (SELECT yes FROM {n}_exact_needed) THEN 'hnsw+exact'
                    ELSE 'hnsw' END AS path
    )"""


# Ranks order the rendering: keyword seeds (1..), similarity seeds (1001..), fallback seeds
# (2001..), then the other ends of the edges (10001..); similar facts (1..) before the
# expansion edges (101..).
_CONTEXT_SQL = (
    "WITH"
    + ",".join(_similarity_search(index) for index in _INDEXES)
    + """,
    seed_candidates AS (
        SELECT id, ord AS rank FROM unnest(%(keyword_seeds)s::bigint[]) WITH ORDINALITY AS k(id, ord)
        UNION ALL
        SELECT id, 1000 + row_number() OVER (ORDER BY similarity DESC, id) FROM entities_hits
    ),
    matched_seeds AS MATERIALIZED (
        SELECT e.id, min(c.rank) AS rank
        FROM seed_candidates AS c
        JOIN gb_entities AS e ON e.id = c.id AND e.dataset_id = %(ds)s
        GROUP BY e.id
    ),
    similar_edges AS MATERIALIZED (
        SELECT g.id, row_number() OVER (ORDER BY h.similarity DESC, g.id) AS rank
        FROM edges_hits AS h
        JOIN gb_edges AS g ON g.id = h.id AND g.dataset_id = %(ds)s AND g.expired_at IS NULL
    ),
    fallback_seeds AS (
        SELECT id, 2000 + row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rank
        FROM (SELECT id, updated_at FROM gb_entities
              WHERE dataset_id = %(ds)s
                AND NOT EXISTS (SELECT 1 FROM matched_seeds) AND NOT EXISTS (SELECT 1 FROM similar_edges)
              ORDER BY updated_at DESC, id DESC
              LIMIT %(fallback)s) AS recent
    ),
    seeds AS MATERIALIZED (
        SELECT id, rank FROM matched_seeds
        UNION ALL
        SELECT id, rank FROM fallback_seeds
    ),
    around AS MATERIALIZED (
        SELECT id, created_at
        FROM (SELECT n.id, n.created_at
              FROM seeds AS s
              CROSS JOIN LATERAL (
                  SELECT g.id, g.created_at FROM gb_edges AS g
                  WHERE g.source_id = s.id AND g.expired_at IS NULL AND g.dataset_id = %(ds)s
                  ORDER BY g.created_at DESC, g.id DESC
                  LIMIT %(expansion)s) AS n
              UNION
              SELECT n.id, n.created_at
              FROM seeds AS s
              CROSS JOIN LATERAL (
                  SELECT g.id, g.created_at FROM gb_edges AS g
                  WHERE g.target_id = s.id AND g.expired_at IS NULL AND g.dataset_id = %(ds)s
                  ORDER BY g.created_at DESC, g.id DESC
                  LIMIT %(expansion)s) AS n) AS both_ends
        ORDER BY created_at DESC, id DESC
        LIMIT %(expansion)s
    ),
    context_edges AS MATERIALIZED (
        SELECT g.*, c.rank
        FROM (SELECT id, min(rank) AS rank
              FROM (SELECT id, rank FROM similar_edges
                    UNION ALL
                    SELECT id, 100 + row_number() OVER (ORDER BY created_at DESC, id DESC) FROM around) AS e
              GROUP BY id) AS c
        JOIN gb_edges AS g ON g.id = c.id
    ),
    context_entities AS MATERIALIZED (
        SELECT id, min(rank) AS rank
        FROM (SELECT id, rank FROM seeds
              UNION ALL SELECT source_id, 10000 + 2 * rank FROM context_edges
              UNION ALL SELECT target_id, 10001 + 2 * rank FROM context_edges) AS e
        GROUP BY id
    ),
    chunk_scores AS (
        SELECT id, max(similarity) AS score, bool_or(by_summary) AS by_summary
        FROM (SELECT id, similarity, false AS by_summary FROM chunks_hits
              UNION ALL
              SELECT id, similarity, true FROM summaries_hits) AS hits
        GROUP BY id
    ),
    ranked_passages AS MATERIALIZED (
        SELECT id, by_summary, row_number() OVER (ORDER BY score DESC, id) AS rank FROM chunk_scores
    ),
    passages AS (
        SELECT id, rank, true AS with_text, by_summary AS with_summary
        FROM ranked_passages WHERE rank <= %(passages_with_text)s
        UNION ALL
        SELECT id, rank, false, true
        FROM (SELECT id, rank FROM ranked_passages
              WHERE rank > %(passages_with_text)s AND by_summary
              ORDER BY rank
              LIMIT %(passages_summary_only)s) AS summary_only
    )
    SELECT 'entity' AS kind, c.rank, e.id, e.name, e.type, e.description,
           CASE WHEN c.rank < 1000 THEN 'keyword_seed' WHEN c.rank < 2000 THEN 'similarity_seed'
                WHEN c.rank < 10000 THEN 'fallback_seed' ELSE 'endpoint' END AS role,
           NULL::bigint AS source_id, NULL::bigint AS target_id, NULL::text AS relation,
           NULL::bigint AS artifact_id, NULL::timestamptz AS valid_at, NULL::timestamptz AS invalid_at,
           NULL::timestamptz AS created_at, NULL::timestamptz AS expired_at,
           NULL::bigint AS parent_id, NULL::integer AS chunk_index, NULL::text AS summary, NULL::text AS text
    FROM context_entities AS c JOIN gb_entities AS e ON e.id = c.id
    UNION ALL
    SELECT 'edge', g.rank, g.id, NULL, NULL, g.description,
           CASE WHEN g.rank <= 100 THEN 'similar_fact' ELSE 'expansion' END,
           g.source_id, g.target_id, g.relation, g.artifact_id, g.valid_at, g.invalid_at, g.created_at,
           g.expired_at, NULL, NULL, NULL, NULL
    FROM context_edges AS g
    UNION ALL
    SELECT 'passage', p.rank, a.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           a.parent_id, a.chunk_index,
           CASE WHEN p.with_summary THEN a.summary END, CASE WHEN p.with_text THEN a.text END
    FROM passages AS p JOIN gb_artifacts AS a ON a.id = p.id
    UNION ALL
    SELECT 'search', 0, NULL, i.name, i.path, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL
    FROM (SELECT 'entities' AS name, path FROM entities_path
          UNION ALL SELECT 'edges', path FROM edges_path
          UNION ALL SELECT 'chunks', path FROM chunks_path
          UNION ALL SELECT 'summaries', path FROM summaries_path) AS i
    ORDER BY 1, 2, 3
    """
)


def context_rows(
    conn: psycopg.Connection, *, dataset_id: int, vector: list[float], keyword_seeds: list[int], limits
) -> list[dict]:
    """The context of a question, in rendering order: rows of kind entity, edge, passage and
    search (which path each similarity search took)."""
    return conn.execute(
        _CONTEXT_SQL,
        {
            "ds": dataset_id,
            "q": Vector(vector),
            "keyword_seeds": keyword_seeds,
            "threshold": limits.similarity_threshold,
            "exact_max": limits.exact_scan_max_rows,
            "candidates": limits.hnsw_candidates,
            "similar_entities": limits.similar_entities,
            "similar_edges": limits.similar_edges,
            "similar_chunks": limits.similar_chunks,
            "similar_summaries": limits.similar_summaries,
            "fallback": limits.fallback_seeds,
            "expansion": limits.expansion_edges,
            "passages_with_text": limits.passages_with_text,
            "passages_summary_only": limits.passages_summary_only,
        },
    ).fetchall()
