"""The retrieval SQL of query: two statements, each one round trip.

1. `keyword_seeds`: the user's dataset and its keyword seeds (run while the question is
   being embedded).
2. `send_context_rows`: everything else at once: the four similarity searches, the seeds, the
   fallback, the one-hop expansion, the similar facts and the passages, as rows of one result.
   The statement is composed of named CTE builders (`similarity_search`, `similar_facts_ctes`,
   `seeds_ctes`, `expansion_ctes`, `passages_ctes`, then `CONTEXT_SELECT`), each of which can be
   run on its own with its upstream CTEs given as VALUES. Every row carries its rank `Band`,
   which tells the decoder (memory/retrieval.py) its kind and its role.

Every value is a parameter (the numbers of the seed come from gligabao.limits, the bands from
`Band`); the SQL text is built only from the fixed fragments below.

How the similarity searches keep the per-dataset filter exact (an HNSW scan, through the
`gb_nearest_*` functions of migration 0014, returns at most `hnsw.ef_search` rows of the whole
table, which the dataset filter can then empty; pgvector 0.8's iterative scans, measured with
`bench/query.py --iterative-scans`, were slower than the exact scan and missed many rows):
* a dataset with few rows in an index's table is scanned exactly (bounded count first);
* otherwise the HNSW index gives the table's nearest `hnsw_candidates` rows (the facts' index
  `hnsw_fact_candidates`; each search walks that many: migration 0020), of which
  row-level security keeps the user's, filtered by dataset (and liveness); that is complete
  when fewer than the wanted matches are left only if a candidate the user sees is already
  below the similarity threshold (the rows beyond the candidates are farther still). Otherwise
  (every candidate seen above the threshold, or none seen: another user's rows crowd the
  nearest ones) a match of this dataset could lie beyond the candidates, and the exact scan
  runs instead.
Each part runs only when needed (one-time filters on uncorrelated sub-selects).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum

import psycopg
from pgvector import Vector

from gligabao.db.statement_functions import StatementFunction, statement_parameters
from gligabao.limits import DEFAULT_LIMITS, Limits


@dataclass(frozen=True)
class KeywordSeeds:
    dataset_id: int | None  # None: the user has no such dataset
    seed_ids: list[int]  # best first
    scores: list[int]
    dataset_created_at: datetime | None = None  # with the id, names the dataset for its life


# The entities of the dataset holding some grams (keys of gb_grams, migration 0002) in their name
# or description, or with one of some name prefixes: ids looked up in the gram and prefix indexes
# by the functions of migration 0003 (descriptions: of gb_entity_descriptions, migration 0017;
# the newest holders of a term: 0018), which row-level security would otherwise keep from the
# indexes. Each lookup is a sub-select (cast: an array, not a set), so an InitPlan: called once
# per statement whatever the plan (a function in a filter would be called on every row); each
# condition is one array of ids, looked up by primary key, instead of filtering the whole dataset.
#
# The terms travel as arrays (`%(terms)s`, and each term's grams flattened in `%(grams)s` with the
# term's position in `%(gram_terms)s`): the statement's text is the same whatever the question, and
# stays far below the 16 KB past which RDS Proxy pins a session to its database connection.

# Arms of the description-gram lookups (any two, any three terms) at most; past it, the pairs are
# looked up instead of the triples (a looser, still exact, condition: the score filters it).
MAX_DESCRIPTION_ARMS = 84

# The question's terms, each with its position (from 1) and its grams.
_TERMS = """
        term AS MATERIALIZED (
            SELECT t.i, t.term,
                   ARRAY(SELECT g.gram FROM unnest(%(grams)s::text[], %(gram_terms)s::integer[]) AS g(gram, i)
                         WHERE g.i = t.i) AS grams
            FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS t(term, i)
        ),"""

# The seed's keyword score of `e` (`l.description`: its lowercased description).
_SCORE = """(CASE WHEN strpos(%(question)s, e.normalized_name) > 0 THEN %(whole_name_score)s::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN %(term_in_name_score)s::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN %(term_in_description_score)s::integer ELSE 0 END), 0)::integer
                   FROM unnest(%(terms)s::text[]) AS t(term)))"""

# The ids of the entities whose description holds the grams of any two (`_PAIRS`) or any three
# (`_TRIPLES`) terms.
_PAIRS = """(SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams)) AS x(id))"""
_TRIPLES = """(SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i JOIN term AS c ON b.i < c.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams || c.grams))
                     AS x(id))"""
# The `limit` most recently updated holders of each term (walked first where `walks` says so).
_RECENT_SINGLES = """(SELECT array_agg(x.id) FROM term AS t JOIN walks AS w ON w.i = t.i
                 CROSS JOIN LATERAL unnest(gb_entities_recently_described(
                     (SELECT id FROM dataset), t.grams, %(limit)s::integer, t.term, w.walk)) AS x(id))"""


def send_keyword_seeds(
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
    walk_rows: int = DEFAULT_LIMITS.keyword_walk_rows,
    whole_name_score: int = DEFAULT_LIMITS.whole_name_score,
    term_in_name_score: int = DEFAULT_LIMITS.term_in_name_score,
    term_in_description_score: int = DEFAULT_LIMITS.term_in_description_score,
) -> psycopg.Cursor:
    """Sends the statement of the dataset's id and its top `limit` entities by the seed's keyword
    score (the whole name in the question, each term in the name, each term in the description: the
    three `*_score`s), ties broken by the most recently updated (then the highest id). Only entities
    that score are seeds; `read_keyword_seeds` reads them.

    The scores are exact; indexes only narrow which entities get scored (migration 0002):
    * the *named* ones: a term in the name (gram index) or the name in the question (prefix index);
    * the *recent* ones: the `window` most recently updated entities, all scored;
    * the *older* ones whose description holds enough terms to still make the top: an entity
      outside the window only scores by its description (`term_in_description_score` per term)
      unless it is named, so it matters only with enough terms to beat the `limit`-th best so far
      (or to tie it, when that one is an older named entity: an older entity loses every tie with
      the window, which holds the most recently updated ones). Those are found by the description
      gram index: any two terms or any three terms, all of them; when one term is enough, only
      the `limit` most recently updated holders of each term (migration 0016: the others holding
      one term have `limit` better entities above them); where the window's share of a term's
      holders says that its `limit` newest lie within half of the `walk_rows` most recently
      updated entities, those are walked in recency order first (migration 0018). A term common
      enough to make a search large also fills the window with matches, which raises the number
      of terms needed.
    """
    params: dict[str, object] = {
        "user_id": user_id,
        "dataset": dataset,
        "question": normalized_question,
        "prefixes": name_prefixes,
        "limit": limit,
        "window": window,
        "walk_rows": walk_rows,
        "terms": list(terms),
        "grams": [gram for grams in term_grams for gram in grams],
        "gram_terms": [i for i, grams in enumerate(term_grams, start=1) for _ in grams],
        "term_count": len(terms),
        "whole_name_score": whole_name_score,
        "term_in_name_score": term_in_name_score,
        "term_in_description_score": term_in_description_score,
    }
    if len(term_grams) != len(terms):
        raise ValueError("one list of grams per term")
    if not terms:
        statement = _KEYWORDS_WITHOUT_TERMS
    elif math.comb(len(terms), 3) <= MAX_DESCRIPTION_ARMS:
        statement = _KEYWORDS_WITH_TRIPLES
    else:
        statement = _KEYWORDS_WITH_PAIRS_FOR_TRIPLES
    return conn.execute(statement.call, params)


def read_keyword_seeds(cursor: psycopg.Cursor) -> KeywordSeeds:
    """What the keyword statement found: in pipeline mode, the statements sent after it share its
    round trip."""
    rows = cursor.fetchall()
    if not rows:
        return KeywordSeeds(None, [], [])
    seeds = [row for row in rows if row["id"] is not None]
    return KeywordSeeds(
        rows[0]["dataset_id"],
        [row["id"] for row in seeds],
        [row["score"] for row in seeds],
        rows[0]["dataset_created_at"],
    )


def _older_entities(holding: str, terms_needed: str) -> str:
    """The entities whose description holds the terms of `holding`, scored, when that many terms
    are needed (a one-time filter: the lookups run only then)."""
    return f"""
            SELECT e.id, e.updated_at, {_SCORE} AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) {terms_needed}
              AND e.id = ANY({holding}::bigint[])"""


def _keyword_sql(three_terms: str) -> str:
    older = "\n            UNION ALL\n".join(
        _older_entities(holding, condition)
        for holding, condition in ((_RECENT_SINGLES, "= 1"), (_PAIRS, "IN (1, 2)"), (three_terms, ">= 3"))
    )
    return f"""
        WITH dataset AS MATERIALIZED (
            SELECT id, created_at
            FROM gb_datasets
            WHERE user_id = %(user_id)s AND name = %(dataset)s
        ),{_TERMS}
        named AS MATERIALIZED (
            SELECT e.id, e.updated_at, {_SCORE} AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.id IN (SELECT unnest((SELECT gb_entities_name_prefixed((SELECT id FROM dataset), %(prefixes)s::text[])))
                           UNION ALL
                           SELECT unnest(gb_entities_named((SELECT id FROM dataset), t.grams)) FROM term AS t)
              AND e.dataset_id = (SELECT id FROM dataset)
        ),
        recent AS MATERIALIZED (
            SELECT e.id, e.updated_at, {_SCORE} AS score, l.description
            FROM (SELECT e.id, e.updated_at, e.normalized_name, e.description
                  FROM (SELECT entity_id FROM gb_entity_recency  -- the recency index, kept by triggers
                        WHERE dataset_id = (SELECT id FROM dataset)
                        ORDER BY updated_at DESC, entity_id DESC
                        LIMIT %(window)s) AS r
                  JOIN gb_entities AS e ON e.id = r.entity_id) AS e
            CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
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
        walks AS MATERIALIZED (
            -- per term: walk its newest holders when the window's share of them says the walk ends
            -- within half of `walk_rows`; 0: the gram index
            SELECT t.i,
                   CASE WHEN 2 * %(limit)s::bigint * count(r.id)
                             <= %(walk_rows)s::bigint * count(r.id) FILTER (WHERE strpos(r.description, t.term) > 0)
                        THEN %(walk_rows)s::integer ELSE 0 END AS walk
            FROM term AS t LEFT JOIN recent AS r ON true
            GROUP BY t.i
        ),
        older AS MATERIALIZED (
            SELECT * FROM (
            {older}
            ) AS found
            WHERE (SELECT terms FROM needed) BETWEEN 1 AND %(term_count)s
        ),
        candidates AS (
            SELECT id, updated_at, score FROM near
            UNION
            SELECT id, updated_at, score FROM older WHERE score > 0
        )
        SELECT d.id AS dataset_id, d.created_at AS dataset_created_at, s.id, s.score
        FROM dataset AS d
        LEFT JOIN LATERAL (
            SELECT id, score FROM candidates
            ORDER BY score DESC, updated_at DESC, id DESC
            LIMIT %(limit)s
        ) AS s ON true
        """


_KEYWORD_SQL_WITH_TRIPLES = _keyword_sql(_TRIPLES)
_KEYWORD_SQL_WITH_PAIRS_FOR_TRIPLES = _keyword_sql(_PAIRS)

# Without terms, only a name inside the question scores (`whole_name_score`).
_KEYWORD_SQL_WITHOUT_TERMS = """
    WITH dataset AS MATERIALIZED (
        SELECT id, created_at
        FROM gb_datasets
        WHERE user_id = %(user_id)s AND name = %(dataset)s
    )
    SELECT d.id AS dataset_id, d.created_at AS dataset_created_at, s.id, s.score
    FROM dataset AS d
    LEFT JOIN LATERAL (
        SELECT e.id, %(whole_name_score)s::integer AS score
        FROM gb_entities AS e
        WHERE e.id IN (SELECT unnest((SELECT gb_entities_name_prefixed((SELECT id FROM dataset), %(prefixes)s::text[]))))
          AND e.dataset_id = (SELECT id FROM dataset)
          AND strpos(%(question)s, e.normalized_name) > 0 AND %(whole_name_score)s::integer > 0
        ORDER BY e.updated_at DESC, e.id DESC
        LIMIT %(limit)s
    ) AS s ON true
"""


@dataclass(frozen=True)
class FactFilter:
    """Which edges a question may retrieve, by any path (the edge index, the similar facts, the
    expansion): the live ones (the seed's rule), or, for a question asked `as_of` a time (SPEC
    section 6), the ones valid at `%(as_of)s`, superseded ones included.

    `as_of` is validity time ("what was true then"), not transaction time ("what we knew then"):
    an edge learned after `as_of` that says it held at `as_of` is retrieved, so `created_at` is
    not filtered."""

    # On an edge's columns, among those gb_nearest_edges gives; `{g}` stands for the edge's alias
    # and its dot.
    condition: str
    # A condition on the edge's id ({g}id) worth testing only on the rows a search keeps (a
    # search's filters, db/retrieval_filters.py): the exact scan tests it past the threshold.
    costly: str = ""

    def on(self, alias: str = "") -> str:
        return self.cheap_on(alias) + (f" AND {self.costly_on(alias)}" if self.costly else "")

    def cheap_on(self, alias: str = "") -> str:
        return self.condition.format(g=f"{alias}." if alias else "")

    def costly_on(self, alias: str = "") -> str:
        return self.costly.format(g=f"{alias}." if alias else "")


LIVE_FACTS = FactFilter("{g}expired_at IS NULL")
FACTS_VALID_AT = FactFilter(
    "{g}valid_at <= %(as_of)s AND ({g}invalid_at IS NULL OR {g}invalid_at > %(as_of)s)"
)


@dataclass(frozen=True)
class VectorIndex:
    """One of the four vector indexes of a dataset."""

    name: str
    table: str
    column: str
    take: str  # the limit's parameter name
    nearest: str  # the function giving the table's nearest rows by its HNSW index (migration 0014)
    rows: str = ""  # which rows of the table belong to the index
    facts: bool = False  # its rows are edges: only those the FactFilter lets through are retrieved
    sized_like: str = ""  # an index of the same rows, whose count this one reuses
    walk: str = "candidates"  # the parameter name of the rows its HNSW search takes (its ef_search)


VECTOR_INDEXES = (
    VectorIndex("entities", "gb_entities", "embedding", "similar_entities", "gb_nearest_entities"),
    VectorIndex(
        "edges",
        "gb_edges",
        "embedding",
        "similar_edges",
        "gb_nearest_edges",
        facts=True,
        walk="fact_candidates",
    ),
    VectorIndex(
        "chunks",
        "gb_artifacts",
        "embedding",
        "similar_chunks",
        "gb_nearest_chunks",
        rows=" AND kind = 'chunk'",
    ),
    VectorIndex(
        "summaries",
        "gb_artifacts",
        "summary_embedding",
        "similar_summaries",
        "gb_nearest_summaries",
        rows=" AND kind = 'chunk'",
        sized_like="chunks",
    ),
)


class Band(IntEnum):
    """The rank band of a row of `send_context_rows`: what the row is and why it is in the context.

    Rows come in band order, then by their rank inside the band. The band is a column of its
    own, not a range of one rank number: no limit can make a band overflow into the next, so
    the bands need no width. The SQL takes each value as the parameter `band.parameter`; the
    decoder (memory/retrieval.py, `context_from_rows`) reads the row's kind and role from it.
    """

    KEYWORD_SEED = 1  # entity: a keyword seed; rank: its place among them, best first
    SIMILARITY_SEED = 2  # entity: a similarity seed that is no keyword seed; rank: best first
    FALLBACK_SEED = 3  # entity: nothing matched; rank: most recently updated first
    ENDPOINT = 4  # entity: only an end of a context edge; rank: 2 * the edge's place (+1 for the target)
    SIMILAR_FACT = 5  # edge: found in the edge index; rank: best first
    EXPANSION = 6  # edge: one hop around a seed, no similar fact; rank: newest first
    PASSAGE_WITH_TEXT = 7  # passage: one of the best, given with its text; rank: best first
    PASSAGE_SUMMARY_ONLY = 8  # passage: given with its summary only; rank: its place among all passages
    SEARCH_PATH = 9  # not context: the path an index's search took (name: the index, type: the path)

    @property
    def kind(self) -> str:
        """entity, edge, passage or search."""
        return _BAND_KINDS[self]

    @property
    def parameter(self) -> str:
        """The name of the SQL parameter holding the band's value: `band_<name>`."""
        return f"band_{self.name.lower()}"


_BAND_KINDS = {
    Band.KEYWORD_SEED: "entity",
    Band.SIMILARITY_SEED: "entity",
    Band.FALLBACK_SEED: "entity",
    Band.ENDPOINT: "entity",
    Band.SIMILAR_FACT: "edge",
    Band.EXPANSION: "edge",
    Band.PASSAGE_WITH_TEXT: "passage",
    Band.PASSAGE_SUMMARY_ONLY: "passage",
    Band.SEARCH_PATH: "search",
}

BAND_PARAMETERS = {band.parameter: int(band) for band in Band}


def similarity_search(index: VectorIndex, facts: FactFilter = LIVE_FACTS) -> str:
    """CTEs `<name>_hits(id, similarity)`, best first, and `<name>_path(path)` (exact, hnsw or
    hnsw+exact): the index's matches from `%(threshold)s`, at most `%(<take>)s` of them (of an
    index of edges, only those `facts` lets through).

    Parameters: ds, q, threshold, exact_max, `<name>_known_large`, the index's `walk` and `take`
    (and as_of with FACTS_VALID_AT)."""
    n, table, column, take = index.name, index.table, index.column, index.take
    live = f" AND {facts.on('r')}" if index.facts else ""
    cheap = f" AND {facts.cheap_on('r')}" if index.facts else ""
    kept = f" AND {facts.costly_on('scan')}" if index.facts and facts.costly else ""
    # A dataset known to hold more rows than that (`%(<name>_known_large)s`) is not counted again:
    # CASE leaves the count's sub-select unrun (retrieval.py, `LargeDatasets`).
    small = (
        f"SELECT yes FROM {index.sized_like}_small"
        if index.sized_like
        else f"""SELECT CASE WHEN %({n}_known_large)s THEN false
                    ELSE (SELECT count(*) <= %(exact_max)s
                          FROM (SELECT 1 FROM {table} WHERE dataset_id = %(ds)s{index.rows}
                                LIMIT %(exact_max)s + 1) AS s) END AS yes"""
    )
    return f"""
    {n}_small AS MATERIALIZED (
        {small}
    ),
    {n}_approx AS MATERIALIZED (
        SELECT * FROM {index.nearest}(%(q)s, %({index.walk})s)
        WHERE NOT (SELECT yes FROM {n}_small)
    ),
    {n}_approx_hits AS MATERIALIZED (
        SELECT r.id, r.distance FROM {n}_approx AS r
        WHERE r.dataset_id = %(ds)s{index.rows}{live} AND 1 - r.distance >= %(threshold)s
        ORDER BY distance, id
        LIMIT %({take})s
    ),
    {n}_exact_needed AS MATERIALIZED (
        SELECT (SELECT yes FROM {n}_small)
            OR ((SELECT count(*) FROM {n}_approx_hits) < %({take})s
                AND coalesce((SELECT min(1 - distance) FROM {n}_approx), 1) >= %(threshold)s) AS yes
    ),
    {n}_exact AS MATERIALIZED (
        SELECT id, distance
        FROM (SELECT r.id, r.{column} <=> %(q)s AS distance
              FROM {table} AS r
              WHERE r.dataset_id = %(ds)s AND r.{column} IS NOT NULL{index.rows}{cheap}
              OFFSET 0) AS scan
        WHERE (SELECT yes FROM {n}_exact_needed) AND 1 - distance >= %(threshold)s{kept}
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


# Rows found by a search (a few dozen ids) are read by primary key, one probe each, in a LATERAL
# subquery the planner cannot turn around (LIMIT 1 keeps it from flattening it into a join). As a
# join, on tables no ANALYZE had seen yet (right after an import), the planner read every live edge
# of the dataset by its dataset index and looked each up among the hits: 2,000 edges and 2,000 scans
# of the hits on the realistic world of 2,000 facts (bench/realistic_world.py), 100,000 at 100k.


def similar_facts_ctes(facts: FactFilter = LIVE_FACTS) -> str:
    """CTE `similar_facts(id, rank, similarity)`: the edges of the dataset among `edges_hits` that
    `facts` lets through (live ones by default), best first (a hit whose row was deleted,
    superseded or moved is dropped), with their cosine from the search.

    Upstream: edges_hits(id, similarity). Parameters: ds (and as_of with FACTS_VALID_AT)."""
    return f"""
    similar_facts AS MATERIALIZED (
        SELECT g.id, row_number() OVER (ORDER BY h.similarity DESC, g.id) AS rank, h.similarity
        FROM edges_hits AS h
        CROSS JOIN LATERAL (SELECT g.id FROM gb_edges AS g
                            WHERE g.id = h.id AND g.dataset_id = %(ds)s AND {facts.on("g")}
                            LIMIT 1) AS g  -- one primary key probe a hit
    )"""


def seeds_ctes(entities: str = "") -> str:
    """CTE `seeds(id, band, rank)`: the keyword seeds (the parameter, best first), then the
    similarity seeds (`entities_hits`, best first) that are not keyword seeds, all resolved in
    the dataset; or, only when none of them and no similar fact is there, the `%(fallback)s`
    most recently updated entities of the dataset. `entities`: a condition on the seed `e` (a
    search's filters, db/retrieval_filters.py), none by default.

    Upstream: entities_hits(id, similarity), similar_facts(id). Parameters: ds, keyword_seeds,
    fallback and the bands."""
    also = f" AND {entities}" if entities else ""
    recent = (
        f"\n                AND EXISTS (SELECT 1 FROM gb_entities AS e WHERE e.id = r.entity_id{also})"
        if entities
        else ""
    )
    return f"""
    seed_candidates AS (
        SELECT id, %(band_keyword_seed)s::integer AS band, ord AS rank
        FROM unnest(%(keyword_seeds)s::bigint[]) WITH ORDINALITY AS k(id, ord)
        UNION ALL
        SELECT id, %(band_similarity_seed)s::integer, row_number() OVER (ORDER BY similarity DESC, id)
        FROM entities_hits
    ),
    matched_seeds AS MATERIALIZED (
        SELECT DISTINCT ON (e.id) e.id, c.band, c.rank
        FROM seed_candidates AS c
        CROSS JOIN LATERAL (SELECT e.id FROM gb_entities AS e
                            WHERE e.id = c.id AND e.dataset_id = %(ds)s{also}
                            LIMIT 1) AS e  -- one primary key probe a hit
        ORDER BY e.id, c.band, c.rank
    ),
    fallback_seeds AS (
        SELECT id, %(band_fallback_seed)s::integer AS band,
               row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rank
        FROM (SELECT r.entity_id AS id, r.updated_at FROM gb_entity_recency AS r  -- the recency index
              WHERE r.dataset_id = %(ds)s
                AND NOT EXISTS (SELECT 1 FROM matched_seeds) AND NOT EXISTS (SELECT 1 FROM similar_facts){recent}
              ORDER BY r.updated_at DESC, r.entity_id DESC
              LIMIT %(fallback)s) AS recent
    ),
    seeds AS MATERIALIZED (
        SELECT id, band, rank FROM matched_seeds
        UNION ALL
        SELECT id, band, rank FROM fallback_seeds
    )"""


def newest_live_edges(entity: str, limit: str, dataset: str, columns: str = "g.id") -> str:
    """The body of a LATERAL subquery: the newest `limit` live edges (`g`) of the dataset at each end
    of the entity `entity` (SQL expressions all), read in that order through the partial indexes of
    the live edges (gb_edges_live_source, gb_edges_live_target); an edge between two such entities
    comes once per end.

    The dataset is a filter only (`+ 0`): an entity's edges are all in its dataset, and without
    statistics (a dataset just imported) the planner read the dataset's live edges by its index
    (gb_edges_live_dataset) for each entity, filtering them by the entity and sorting: 0.6 s of a
    retrieval on the realistic world of 10,000 facts (bench/realistic_world.py)."""
    return "\n                  UNION ALL\n                  ".join(
        f"""(SELECT {columns} FROM gb_edges AS g
                   WHERE g.{end} = {entity} AND g.expired_at IS NULL AND g.dataset_id + 0 = {dataset}
                   ORDER BY g.created_at DESC, g.id DESC
                   LIMIT {limit})"""
        for end in ("source_id", "target_id")
    )


# The live edges around the seeds: per seed and end, the newest `%(expansion_per_seed)s`
# (newest_live_edges), then the newest of them all; with `%(strongest_seeds_first)s` (the ranked retrieval), those of the best
# seeds first (band, then rank), so that the cap never drops the facts of what the question names.
_AROUND_LIVE = f"""
    around AS MATERIALIZED (
        SELECT id, created_at
        FROM (SELECT n.id, n.created_at, min(ARRAY[s.band::bigint, s.rank]) AS seed
              FROM seeds AS s
              CROSS JOIN LATERAL (
                  {newest_live_edges("s.id", "%(expansion_per_seed)s", "%(ds)s", "g.id, g.created_at")}) AS n
              GROUP BY n.id, n.created_at) AS both_ends
        ORDER BY CASE WHEN %(strongest_seeds_first)s THEN seed END, created_at DESC, id DESC
        LIMIT %(expansion)s
    ),"""

# The edges around the seeds at another time, superseded ones included: the newest edges touching
# any seed (the rows of the per-seed form above). The seeds as arrays let the planner combine
# index scans of both ends (BitmapOr) where the schema has indexes of every edge's ends (the
# live-edge ones of 0001 hold no superseded edge), and scan the dataset's edges newest first
# otherwise.
_AROUND_ANY_TIME = """
    around AS MATERIALIZED (
        SELECT g.id, g.created_at
        FROM gb_edges AS g
        WHERE (g.source_id = ANY (ARRAY(SELECT id FROM seeds)) OR g.target_id = ANY (ARRAY(SELECT id FROM seeds)))
          AND g.dataset_id = %(ds)s AND {facts}
        ORDER BY g.created_at DESC, g.id DESC
        LIMIT %(expansion)s
    ),"""


# The ranked retrieval's hops beyond the seeds (only when `%(second_hop)s` > 0: 0 in the seed's
# retrieval and around geo's entities). The question's terms that ask something of the chain
# (`%(hop_terms)s`, stemmed, less the words of the best keyword seeds' names: "born" and "spouse"
# of "where was the spouse of Alice Novak born?") choose the facts of each hop before their cosine
# does: the fact a hop needs is often the least similar of a busy entity's ("Acme makes cargo
# bikes" among Acme's hundred employees), and each term counts once along a path (the terms a
# hop matched are `used` by the next), so that "in which country was the spouse of Alice born?"
# takes the spouse's birthplace (born), then that city's country (country), not its other births.
# The second hop: the far ends of `%(hop_frontier)s` first-hop facts (a weak seed too: the cap of
# the first hop may have left its facts out), those of the `%(hop_seeds)s` best keyword seeds
# first (what the question names), then the ones most similar to the question; then per end, of
# its newest `%(hop_scan)s` facts per end `{facts}` lets through, the `%(second_hop)s` that match
# most terms (the newest first), of which the `%(hop_per_end)s` that match most, most similar
# first. At each of these two steps the entity's two sides take turns (its newest or most similar
# fact as source, then as target, then its second of each...): a town's one fact of its own ("part
# of Mirren Province", old and unlike the question) is no longer crowded out by the hundreds of
# people who live there, nor a doctor's one practice by her patients (the family world's three-hop
# recall, docs/performance.md "Worlds nobody tuned for"; `s`: the side, 1 source and 2 target,
# named short, as the statement must stay under 16 kB with every filter: db/retrieval_filters.py).
# The third hop: the same from the far ends of the `%(third_frontier)s` second-hop facts
# whose paths met most terms (then the most similar), `%(third_hop_per_end)s` facts each: "in which city is the museum that Alice's husband
# designed?" reaches the museum's city in the same statement.
# Each scanned fact's cosine is computed in the scan, on the row it has just read (the vector is in
# the row: migration 0013), though only the `%(second_hop)s` kept per end need it: reading the kept
# ones again by their key to compute it cost more (a realistic world's context statement at 10,000
# facts, docs/performance.md "Realistic world").
_HOP = """
        SELECT n.id, n.far_end, n.used, n.matched, n.distance
        FROM (SELECT e.id, e.far_end, {used} || m.terms AS used, cardinality(m.terms) AS matched, e.distance,
                     e.s
              FROM ((SELECT g.id, g.target_id AS far_end, g.relation, g.description, g.created_at,
                            g.embedding <=> %(q)s::vector AS distance, 1 AS s
                     FROM gb_edges AS g
                     WHERE g.source_id = {entity} AND {facts} AND g.dataset_id + 0 = %(ds)s
                     ORDER BY g.created_at DESC, g.id DESC LIMIT %(hop_scan)s)
                    UNION ALL
                    (SELECT g.id, g.source_id, g.relation, g.description, g.created_at,
                            g.embedding <=> %(q)s::vector, 2
                     FROM gb_edges AS g
                     WHERE g.target_id = {entity} AND {facts} AND g.dataset_id + 0 = %(ds)s
                     ORDER BY g.created_at DESC, g.id DESC LIMIT %(hop_scan)s)) AS e
              JOIN gb_entities AS o ON o.id = e.far_end
              CROSS JOIN LATERAL (
                  SELECT ARRAY(SELECT t.term FROM hop_terms AS t
                               WHERE t.term <> ALL ({used})
                                 AND strpos(lower(replace(e.relation, '_', ' ') || ' ' || e.description
                                                  || ' ' || o.type || ' ' || o.description), t.term) > 0
                               ORDER BY t.term) AS terms) AS m
              ORDER BY cardinality(m.terms) DESC,
                       row_number() OVER (PARTITION BY e.s ORDER BY e.created_at DESC, e.id DESC), e.id DESC
              LIMIT %(second_hop)s) AS n
        ORDER BY n.matched DESC,
                 row_number() OVER (PARTITION BY n.matched, n.s ORDER BY n.distance),
                 n.distance, n.id
        LIMIT {take}"""

_SECOND_HOP = (
    """
    around_similarity AS MATERIALIZED (
        SELECT a.id, 1 - (g.embedding <=> %(q)s::vector) AS similarity
        FROM around AS a JOIN gb_edges AS g ON g.id = a.id
        WHERE a.id NOT IN (SELECT id FROM similar_facts)
    ),
    first_hop AS MATERIALIZED (
        SELECT id, similarity FROM similar_facts
        UNION ALL
        SELECT id, similarity FROM around_similarity
    ),
    hop_terms AS MATERIALIZED (
        SELECT t.term FROM unnest(%(hop_terms)s::text[]) AS t(term)
        WHERE NOT EXISTS (SELECT 1 FROM seeds AS s JOIN gb_entities AS e ON e.id = s.id
                          WHERE s.band = %(band_keyword_seed)s AND s.rank <= %(hop_seeds)s
                            AND strpos(e.normalized_name, t.term) > 0)
    ),
    hop_frontier AS MATERIALIZED (
        SELECT DISTINCT ON (ends.id) ends.id, g.used
        FROM (SELECT g.source_id, g.target_id,
                     ARRAY(SELECT t.term FROM hop_terms AS t
                           WHERE strpos(lower(replace(g.relation, '_', ' ') || ' ' || g.description), t.term) > 0
                           ORDER BY t.term) AS used
              FROM first_hop AS f
              JOIN gb_edges AS g ON g.id = f.id
              WHERE %(second_hop)s > 0
              ORDER BY EXISTS (SELECT 1 FROM seeds AS s
                               WHERE s.band = %(band_keyword_seed)s AND s.rank <= %(hop_seeds)s
                                 AND s.id IN (g.source_id, g.target_id)) DESC,
                       f.similarity DESC NULLS LAST, g.id
              LIMIT %(hop_frontier)s) AS g
        CROSS JOIN LATERAL (VALUES (g.source_id), (g.target_id)) AS ends(id)
        WHERE ends.id NOT IN (SELECT id FROM seeds
                              WHERE band = %(band_keyword_seed)s AND rank <= %(hop_seeds)s)
        ORDER BY ends.id, cardinality(g.used) DESC
    ),
    second_hop AS MATERIALIZED (
        SELECT DISTINCT ON (r.id) r.id, r.far_end, r.used, r.matched, r.distance
        FROM hop_frontier AS f
        CROSS JOIN LATERAL ("""
    + _HOP.format(entity="f.id", used="f.used", take="%(hop_per_end)s", facts="{facts}")
    + """) AS r
        ORDER BY r.id, r.matched DESC, r.distance
    ),
    third_frontier AS MATERIALIZED (
        SELECT DISTINCT ON (h.far_end) h.far_end AS id, h.used
        FROM (SELECT far_end, used, matched FROM second_hop
              WHERE far_end NOT IN (SELECT id FROM hop_frontier) AND far_end NOT IN (SELECT id FROM seeds)
              ORDER BY cardinality(used) DESC, distance, id
              LIMIT %(third_frontier)s) AS h
        ORDER BY h.far_end, h.matched DESC
    ),
    third_hop AS MATERIALIZED (
        SELECT DISTINCT ON (r.id) r.id, r.distance
        FROM third_frontier AS f
        CROSS JOIN LATERAL ("""
    + _HOP.format(entity="f.id", used="f.used", take="%(third_hop_per_end)s", facts="{facts}")
    + """) AS r
        WHERE r.id NOT IN (SELECT id FROM second_hop)
        ORDER BY r.id, r.distance
    ),"""
)


# The edges of the context (the similar facts, then the ones around, then the second hop's after
# them in the expansion band) and its entities.
_CONTEXT_EDGES_AND_ENTITIES = """
    context_edges AS MATERIALIZED (
        SELECT g.id, g.source_id, g.target_id, g.relation, g.description, g.artifact_id,
               g.valid_at, g.invalid_at, g.created_at, g.expired_at, g.model_id, c.band, c.rank, c.similarity
        FROM (SELECT DISTINCT ON (id) id, band, rank, similarity
              FROM (SELECT id, %(band_similar_fact)s::integer AS band, rank, similarity FROM similar_facts
                    UNION ALL
                    SELECT a.id, %(band_expansion)s::integer,
                           row_number() OVER (ORDER BY a.created_at DESC, a.id DESC), s.similarity
                    FROM around AS a LEFT JOIN around_similarity AS s ON s.id = a.id
                    UNION ALL
                    SELECT id, %(band_expansion)s::integer,
                           %(expansion)s + row_number() OVER (ORDER BY distance, id), 1 - distance
                    FROM second_hop
                    UNION ALL
                    SELECT id, %(band_expansion)s::integer,
                           2 * %(expansion)s + row_number() OVER (ORDER BY distance, id), 1 - distance
                    FROM third_hop) AS e
              ORDER BY id, band, rank) AS c
        JOIN gb_edges AS g ON g.id = c.id
    ),
    context_entities AS MATERIALIZED (
        SELECT DISTINCT ON (id) id, band, rank
        FROM (SELECT id, band, rank FROM seeds
              UNION ALL
              SELECT ends.id, %(band_endpoint)s::integer, 2 * g.place + ends.side
              FROM (SELECT source_id, target_id, row_number() OVER (ORDER BY band, rank, id) AS place
                    FROM context_edges) AS g
              CROSS JOIN LATERAL (VALUES (g.source_id, 0), (g.target_id, 1)) AS ends(id, side)) AS e
        ORDER BY id, band, rank
    )"""


def expansion_ctes(facts: FactFilter = LIVE_FACTS) -> str:
    """CTEs `around(id, created_at)`: the `%(expansion)s` newest edges of the dataset that `facts`
    lets through (live ones by default) with a seed at either end; `around_similarity(id,
    similarity)` and `first_hop(id, similarity)`: the cosines of the first hop, each computed once
    (a similar fact's comes from its search); `hop_terms(term)`, `hop_frontier(id, used)`,
    `second_hop(id, far_end, used, matched, distance)`, `third_frontier(id, used)` and
    `third_hop(id, distance)`: the ranked retrieval's second and third hops (empty when `%(second_hop)s` is
    0); `context_edges(id, source_id, target_id, relation, description, artifact_id, valid_at,
    invalid_at, created_at, expired_at, model_id, band, rank, similarity)`: the similar facts then those
    (each edge once); `context_entities(id, band, rank)`: the seeds, then the ends of the context
    edges in the order of the edges (each entity once, in its first band).

    Upstream: seeds(id, band, rank), similar_facts(id, rank). Parameters: ds, q, expansion,
    second_hop, hop_frontier, hop_seeds, hop_per_end, hop_terms, hop_scan, third_frontier,
    third_hop_per_end and the bands (and as_of with FACTS_VALID_AT)."""
    around = _AROUND_LIVE if facts is LIVE_FACTS else _AROUND_ANY_TIME.format(facts=facts.on("g"))
    return around + _SECOND_HOP.format(facts=facts.on("g")) + _CONTEXT_EDGES_AND_ENTITIES


def passages_ctes(chunks: str = "") -> str:
    """CTE `passages(id, band, rank, with_summary)`: the chunk and summary hits put together by
    chunk (a chunk's score is the better of its two) and ranked; the best
    `%(passages_with_text)s` with their text, then up to `%(passages_summary_only)s` more found by
    their summary, with it only. `with_summary`: the summary was found (then it is given).

    `chunks`: a condition on the chunk `a` (a search's filters), none by default.

    Upstream: chunks_hits(id, similarity), summaries_hits(id, similarity). Parameters:
    passages_with_text, passages_summary_only and the bands."""
    kept = (
        f"\n        WHERE EXISTS (SELECT 1 FROM gb_artifacts AS a WHERE a.id = hits.id AND {chunks})"
        if chunks
        else ""
    )
    return f"""
    chunk_scores AS (
        SELECT id, max(similarity) AS score, bool_or(by_summary) AS by_summary
        FROM (SELECT id, similarity, false AS by_summary FROM chunks_hits
              UNION ALL
              SELECT id, similarity, true FROM summaries_hits) AS hits{kept}
        GROUP BY id
    ),
    ranked_passages AS MATERIALIZED (
        SELECT id, by_summary, row_number() OVER (ORDER BY score DESC, id) AS rank FROM chunk_scores
    ),
    passages AS (
        SELECT id, %(band_passage_with_text)s::integer AS band, rank, by_summary AS with_summary
        FROM ranked_passages WHERE rank <= %(passages_with_text)s
        UNION ALL
        SELECT id, %(band_passage_summary_only)s::integer, rank, true
        FROM (SELECT id, rank FROM ranked_passages
              WHERE rank > %(passages_with_text)s AND by_summary
              ORDER BY rank
              LIMIT %(passages_summary_only)s) AS summary_only
    )"""


# The rows of the context, in rendering order (band, then rank): entities, edges, passages, then
# one row per index saying which path its search took. The columns a kind has no use for are NULL.
# `similarity`: the row's cosine with the question (`%(q)s`; NULL without one or without a vector;
# a passage's is the better of its text's and its summary's), which the ranked context
# (memory/ranking.py) orders by: computed here, on the few rows of the context, at no round trip.
# An entity's only in the seed bands: the ranking scores an end of a fact with its fact, and each
# cosine reads a vector stored out of line (TOAST) at 1536 dimensions.
# Upstream: context_entities, context_edges, passages and the four `<index>_path`.
CONTEXT_SELECT = """
    SELECT c.band, c.rank, e.id, e.name, e.type, e.description,
           NULL::bigint AS source_id, NULL::bigint AS target_id, NULL::text AS relation,
           NULL::bigint AS artifact_id, NULL::timestamptz AS valid_at, NULL::timestamptz AS invalid_at,
           NULL::timestamptz AS created_at, NULL::timestamptz AS expired_at,
           NULL::bigint AS parent_id, NULL::integer AS chunk_index, NULL::text AS summary, NULL::text AS text,
           CASE WHEN c.band < %(band_endpoint)s::integer THEN 1 - (e.embedding <=> %(q)s::vector) END AS similarity,
           e.model_id
    FROM context_entities AS c JOIN gb_entities AS e ON e.id = c.id
    UNION ALL
    SELECT g.band, g.rank, g.id, NULL, NULL, g.description,
           g.source_id, g.target_id, g.relation, g.artifact_id, g.valid_at, g.invalid_at, g.created_at,
           g.expired_at, NULL, NULL, NULL, NULL, g.similarity, g.model_id
    FROM context_edges AS g
    UNION ALL
    SELECT p.band, p.rank, a.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           a.parent_id, a.chunk_index, CASE WHEN p.with_summary THEN a.summary END,
           CASE WHEN p.band = %(band_passage_with_text)s::integer THEN a.text END,
           greatest(1 - (a.embedding <=> %(q)s::vector), 1 - (a.summary_embedding <=> %(q)s::vector)), NULL
    FROM passages AS p JOIN gb_artifacts AS a ON a.id = p.id
    UNION ALL
    SELECT %(band_search_path)s::integer, 0, NULL, i.name, i.path, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM (SELECT 'entities' AS name, path FROM entities_path
          UNION ALL SELECT 'edges', path FROM edges_path
          UNION ALL SELECT 'chunks', path FROM chunks_path
          UNION ALL SELECT 'summaries', path FROM summaries_path) AS i
    ORDER BY band, rank, id, name
"""


def with_ctes(ctes: list[str], select: str) -> str:
    """One statement: the CTE fragments (each one or more `name AS (...)`), then the select,
    compacted (`compact_sql`)."""
    return compact_sql("WITH" + ",".join(ctes) + "\n" + select)


_STRING_LITERAL = re.compile(r"('(?:[^']|'')*')")
_COMMENT_OR_SPACE = re.compile(r"(?:--[^\n]*|\s)+")
_SPACE_BESIDE_PUNCTUATION = re.compile(r" ?([(),]) ?")


def compact_sql(statement: str) -> str:
    """The statement without its comments and with one space where it had several, none beside
    parentheses and commas (string literals untouched). The context statement is written to be
    read; sent as written it would pass 16 KB, the size past which RDS Proxy pins a session
    (test_statement_sizes.py)."""
    pieces = _STRING_LITERAL.split(statement)  # odd positions: the literals
    for index in range(0, len(pieces), 2):
        pieces[index] = _SPACE_BESIDE_PUNCTUATION.sub(r"\1", _COMMENT_OR_SPACE.sub(" ", pieces[index]))
    return "".join(pieces).strip()


def context_statement(facts: FactFilter = LIVE_FACTS) -> str:
    """The whole context of a question in one statement: the builders, composed in order."""
    return with_ctes(
        [
            *(similarity_search(index, facts) for index in VECTOR_INDEXES),
            similar_facts_ctes(facts),
            seeds_ctes(),
            expansion_ctes(facts),
            passages_ctes(),
        ],
        CONTEXT_SELECT,
    )


# The entities and edges of CONTEXT_SELECT (no passage, no search path).
_AROUND_SELECT = (
    CONTEXT_SELECT[: CONTEXT_SELECT.index("    UNION ALL\n    SELECT p.band")]
    + "    ORDER BY band, rank, id\n"
)


def around_entities_statement(facts: FactFilter = LIVE_FACTS) -> str:
    """The edges around some entities (geo's nearby ones) and their other ends, in one statement:
    the expansion builder with `%(entity_ids)s` as its seeds and no similar fact, decoded like the
    context (its entities in the keyword-seed band, its edges in the expansion band)."""
    upstream = """
    seeds AS MATERIALIZED (
        SELECT id, %(band_keyword_seed)s::integer AS band, ord AS rank
        FROM unnest(%(entity_ids)s::bigint[]) WITH ORDINALITY AS s(id, ord)
    ),
    similar_facts AS (SELECT NULL::bigint AS id, NULL::bigint AS rank, NULL::float8 AS similarity WHERE false)"""
    return with_ctes([upstream, expansion_ctes(facts)], _AROUND_SELECT)


_AROUND_SQL = around_entities_statement()
_AROUND_AS_OF_SQL = around_entities_statement(FACTS_VALID_AT)


def around_entities_rows(
    conn: psycopg.Connection,
    *,
    dataset_id: int,
    entity_ids: list[int],
    limits: Limits,
    as_of: datetime | None = None,
) -> list[dict]:
    """The `limits.expansion_edges` newest edges (live, or valid `as_of`) with one of `entity_ids`
    at an end, and the entities at their ends: rows as `send_context_rows` gives them."""
    if not entity_ids:
        return []
    params = {
        "ds": dataset_id,
        "entity_ids": entity_ids,
        "q": None,  # no question here: the rows' similarity is NULL
        "expansion": limits.expansion_edges,
        "second_hop": 0,
        "hop_frontier": 0,
        "hop_seeds": 0,
        "hop_per_end": 0,
        "hop_terms": [],
        "hop_scan": 0,
        "third_frontier": 0,
        "third_hop_per_end": 0,
        "expansion_per_seed": limits.expansion_edges,
        "strongest_seeds_first": False,
        **BAND_PARAMETERS,
        **({} if as_of is None else {"as_of": as_of}),
    }
    return conn.execute(_AROUND_SQL if as_of is None else _AROUND_AS_OF_SQL, params).fetchall()


_CONTEXT_SQL = context_statement()
_CONTEXT_AS_OF_SQL = context_statement(FACTS_VALID_AT)


# --- the statement functions (db/statement_functions.py) ----------------------------------------
# The statements every query sends, run as functions whose plans the database connection keeps;
# the context of a question asked `as_of` a time too. The parameters' types are those PostgreSQL
# infers from the statement (test_statement_functions.py checks them), so that the function reads
# its arguments as the statement read its parameters. A question with filters has a statement of
# its own shape (db/retrieval_filters.py), sent as it is.

_KEYWORD_TYPES = {
    "user_id": "text",
    "dataset": "text",
    "grams": "text[]",
    "gram_terms": "integer[]",
    "terms": "text[]",
    "question": "text",
    "whole_name_score": "integer",
    "term_in_name_score": "integer",
    "term_in_description_score": "integer",
    "prefixes": "text[]",
    "window": "bigint",
    "limit": "integer",
    "walk_rows": "bigint",
    "term_count": "integer",
}
_KEYWORDS_WITH_TRIPLES = StatementFunction("gb_keyword_seeds", _KEYWORD_SQL_WITH_TRIPLES, _KEYWORD_TYPES)
_KEYWORDS_WITH_PAIRS_FOR_TRIPLES = StatementFunction(
    "gb_keyword_seeds_by_pairs", _KEYWORD_SQL_WITH_PAIRS_FOR_TRIPLES, _KEYWORD_TYPES
)
_KEYWORDS_WITHOUT_TERMS = StatementFunction(
    "gb_keyword_seeds_without_terms",
    _KEYWORD_SQL_WITHOUT_TERMS,
    {
        "user_id": "text",
        "dataset": "text",
        "whole_name_score": "integer",
        "prefixes": "text[]",
        "question": "text",
        "limit": "bigint",
    },
)
# The parameters of the context statements (live and as of a time), as PostgreSQL infers them.
_CONTEXT_TYPES = {
    "entities_known_large": "boolean",
    "exact_max": "integer",
    "ds": "bigint",
    "q": "vector",
    "candidates": "integer",
    "threshold": "double precision",
    "similar_entities": "bigint",
    "edges_known_large": "boolean",
    "fact_candidates": "integer",
    "as_of": "timestamp with time zone",
    "similar_edges": "bigint",
    "chunks_known_large": "boolean",
    "similar_chunks": "bigint",
    "similar_summaries": "bigint",
    "band_keyword_seed": "integer",
    "keyword_seeds": "bigint[]",
    "band_similarity_seed": "integer",
    "band_fallback_seed": "integer",
    "fallback": "bigint",
    "expansion_per_seed": "bigint",
    "strongest_seeds_first": "boolean",
    "expansion": "bigint",
    "hop_terms": "text[]",
    "hop_seeds": "bigint",
    "second_hop": "integer",
    "hop_frontier": "bigint",
    "hop_scan": "bigint",
    "hop_per_end": "bigint",
    "third_frontier": "bigint",
    "third_hop_per_end": "bigint",
    "band_similar_fact": "integer",
    "band_expansion": "integer",
    "band_endpoint": "integer",
    "band_passage_with_text": "integer",
    "passages_with_text": "bigint",
    "band_passage_summary_only": "integer",
    "passages_summary_only": "bigint",
    "band_search_path": "integer",
}


def _context_function(name: str, statement: str) -> StatementFunction:
    return StatementFunction(name, statement, {p: _CONTEXT_TYPES[p] for p in statement_parameters(statement)})


_CONTEXT = _context_function("gb_context_rows", _CONTEXT_SQL)
_CONTEXT_AS_OF = _context_function("gb_context_rows_as_of", _CONTEXT_AS_OF_SQL)

STATEMENT_FUNCTIONS = (
    _KEYWORDS_WITH_TRIPLES,
    _KEYWORDS_WITH_PAIRS_FOR_TRIPLES,
    _KEYWORDS_WITHOUT_TERMS,
    _CONTEXT,
    _CONTEXT_AS_OF,
)


def unwrapped(query: object, params: object) -> tuple[object, object]:
    """The statement that a call of one of STATEMENT_FUNCTIONS runs (to run it again or EXPLAIN it
    on its own), else the query as it is."""
    for function in STATEMENT_FUNCTIONS:
        if query == function.call:
            return function.statement, params
    return query, params


def walk_widths(limits: Limits) -> dict[str, int]:
    """The candidates each search takes, by the parameter its `VectorIndex.walk` names."""
    return {"candidates": limits.hnsw_candidates, "fact_candidates": limits.hnsw_fact_candidates}


def context_parameters(
    *,
    dataset_id: int,
    vector: list[float],
    keyword_seeds: list[int],
    limits: Limits,
    as_of: datetime | None = None,
    hop_terms: Sequence[str] = (),
    known_large: Collection[str] = (),
) -> dict[str, object]:
    """The parameters of the context statement (and of each of its builders); `as_of` only for
    the statement of FACTS_VALID_AT; `hop_terms`: the question's stemmed terms that choose the
    facts of the ranked retrieval's hops; `known_large`: the indexes whose rows of the dataset are
    known to be more than `exact_scan_max_rows` (not counted again)."""
    time_travel = {} if as_of is None else {"as_of": as_of}
    ranked = limits.retrieval == "ranked"
    return {
        **time_travel,
        "ds": dataset_id,
        "q": Vector(vector),
        "keyword_seeds": keyword_seeds,
        "threshold": limits.similarity_threshold,
        "exact_max": limits.exact_scan_max_rows,
        **{
            f"{index.name}_known_large": index.name in known_large
            for index in VECTOR_INDEXES
            if not index.sized_like  # its size is the other index's
        },
        **walk_widths(limits),
        "similar_entities": limits.similar_entities,
        "similar_edges": limits.similar_edges,
        "similar_chunks": limits.similar_chunks,
        "similar_summaries": limits.similar_summaries,
        "fallback": limits.fallback_seeds,
        "expansion": limits.expansion_edges,
        "second_hop": limits.rank_second_hop_edges if ranked else 0,
        "hop_frontier": limits.rank_hop_frontier,
        "hop_seeds": limits.rank_hop_seeds,
        "hop_per_end": limits.rank_hop_per_end,
        "hop_terms": list(hop_terms),
        "hop_scan": limits.rank_hop_scan_edges,
        "third_frontier": limits.rank_third_hop_frontier if ranked else 0,
        "third_hop_per_end": limits.rank_third_hop_per_end,
        "expansion_per_seed": limits.rank_expansion_per_seed if ranked else limits.expansion_edges,
        "strongest_seeds_first": ranked,
        "passages_with_text": limits.passages_with_text,
        "passages_summary_only": limits.passages_summary_only,
        **BAND_PARAMETERS,
    }


def send_context_rows(
    conn: psycopg.Connection,
    *,
    dataset_id: int,
    vector: list[float],
    keyword_seeds: list[int],
    limits,
    as_of: datetime | None = None,
    hop_terms: Sequence[str] = (),
    known_large: Collection[str] = (),
) -> psycopg.Cursor:
    """The context of a question, in rendering order (`Band`, then rank): rows of entities, edges,
    passages and search paths, each tagged with its band. Its edges are the live ones, or with
    `as_of` the ones valid at that time (FACTS_VALID_AT); `known_large`: as `context_parameters`.
    The rows are read later (in pipeline mode, after the COMMIT that travels with the statement)."""
    return conn.execute(
        (_CONTEXT if as_of is None else _CONTEXT_AS_OF).call,
        context_parameters(
            dataset_id=dataset_id,
            vector=vector,
            keyword_seeds=keyword_seeds,
            limits=limits,
            as_of=as_of,
            hop_terms=hop_terms,
            known_large=known_large,
        ),
    )
