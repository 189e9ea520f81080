"""Retrieval of query: the subgraph and the passages a question is answered from.

Two sources are added together (seeds/query.md, "How it works" steps 1-2): keywords (SQL over
gb_entities) and similarity (the four pgvector indexes). The question's embedding request and
the keyword search run at the same time; the whole retrieval is two statements of our own
(db/graph_reads.py) inside the user's transaction.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

import psycopg
from psycopg.rows import tuple_row

from gligabao.db import graph_reads, retrieval_filters
from gligabao.db import series as series_rows
from gligabao.db.connection import UnitOfWork
from gligabao.db.graph_reads import Band
from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.errors import NotFound, ProviderError
from gligabao.limits import DEFAULT_LIMITS, Limits
from gligabao.memory import ranking
from gligabao.memory.names import normalized_name
from gligabao.model import Nearby, Passage, StoredEdge, StoredEntity, built_from_values

# The numbers of the seed (SPEC section 14) live once, in gligabao.limits (DEFAULT_LIMITS, Limits).

# A name inside the question starts with one of the question's substrings of this many
# characters (or is shorter): the width of the gb_entities_name_prefix index.
NAME_PREFIX_CHARS = 6

# Common English words dropped from the question (function words and question words).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could did didn't do does doesn't doing don't down during each
    few for from further had has have having he her here hers herself him himself his how i if in
    into is isn't it its itself just let me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was wasn't
    we were weren't what when where which while who whom whose why will with would you your yours
    yourself yourselves tell please also ever still yet may might must shall s t d ll m o re ve y
    """.split()
)

_WORD = re.compile(r"[^\W_]+")


def query_terms(question: str, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The question lowercased and split into terms: terms shorter than `min_term_chars`,
    stopwords and duplicates dropped, at most `max_query_terms` kept, in the order of the question."""
    terms: list[str] = []
    for word in _WORD.findall(normalized_name(question)):
        if len(word) < limits.min_term_chars or word in STOPWORDS or word in terms:
            continue
        terms.append(word)
        if len(terms) == limits.max_query_terms:
            break
    return terms


def term_grams(term: str) -> list[str]:
    """The grams a text must hold to contain `term`: its trigrams, or itself when it has 2 characters
    (the keys of gb_grams in migration 0002)."""
    if len(term) < 3:
        return [term]
    return sorted({term[i : i + 3] for i in range(len(term) - 2)})


def name_prefix_keys(normalized_question: str) -> list[str]:
    """Every substring of the question of 1 to NAME_PREFIX_CHARS characters: the possible
    `left(normalized_name, 6)` of a name that appears in the question."""
    keys = {
        normalized_question[start : start + width]
        for width in range(1, NAME_PREFIX_CHARS + 1)
        for start in range(len(normalized_question) - width + 1)
    }
    # A normalized name never starts with a space; its 6-character prefix may end with one.
    return sorted(key for key in keys if not key[0].isspace())


# --- what retrieval returns -------------------------------------------------------------


@dataclass
class Context:
    """The subgraph and passages sent to the LLM, in the order they are rendered."""

    dataset_id: int
    entities: list[StoredEntity] = field(default_factory=list)
    edges: list[StoredEdge] = field(default_factory=list)  # with their endpoints' names
    passages: list[Passage] = field(default_factory=list)
    keyword_seeds: list[int] = field(default_factory=list)
    similarity_seeds: list[int] = field(default_factory=list)  # the ones that are no keyword seed
    similar_edges: list[int] = field(default_factory=list)  # the similar facts
    fallback: bool = False  # nothing matched: the seeds are the most recently updated entities
    fallback_seeds: list[int] = field(default_factory=list)
    search_paths: dict[str, str] = field(default_factory=dict)  # index -> "exact", "hnsw" or "hnsw+exact"
    timings_ms: dict[str, float] = field(default_factory=dict)
    nearby: Nearby | None = None  # geo: the entities near the question's places (rendered apart)
    # The timeseries anchored to the context's entities and edges, as the prompt's lines (query
    # reads them after the ranking, within what the budget leaves: memory/timeseries.py).
    series_lines: list[str] = field(default_factory=list)
    holds_series: bool = False  # the dataset holds a timeseries (read with the context statement)
    # Each row's cosine with the question (NULL ones left out), which the ranked context orders by.
    similarity: dict[tuple[str, int], float] = field(default_factory=dict)  # (kind, id) -> cosine
    candidates: dict[str, int] = field(default_factory=dict)  # ranked: kind -> count before the cut
    scores: dict[tuple[str, int], float] = field(default_factory=dict)  # ranked: (kind, id) -> relevance

    def add_nearby(self, around_rows: list[dict] = ()) -> None:
        """The anchors and the nearby entities join the context's entities, then the edges
        around the nearby entities (rows of graph_reads.around_entities_rows) and their other
        ends: each entity and edge once, so the answer may cite them."""
        if self.nearby is None:
            return
        around = context_from_rows(self.dataset_id, list(around_rows))
        known = {entity.id for entity in self.entities}
        anchors = [a.entity for a in self.nearby.anchors]
        for entity in anchors + [n.entity for n in self.nearby.entities] + around.entities:
            if entity.id not in known:
                known.add(entity.id)
                self.entities.append(entity)
        known_edges = {edge.id for edge in self.edges}
        self.edges.extend(edge for edge in around.edges if edge.id not in known_edges)

    @property
    def empty(self) -> bool:
        """Nothing to answer from: no entity or fact, and no passage."""
        return not self.entities and not self.edges and not self.passages

    def entity(self, entity_id: int) -> StoredEntity | None:
        return next((e for e in self.entities if e.id == entity_id), None)


# --- datasets too large for an exact scan ----------------------------------------------------


class LargeDatasets:
    """The datasets found to hold more rows in a vector index's table than an exact scan reads
    (`exact_scan_max_rows`), by (dataset id, its created_at): this process's next retrievals from
    them do not count those rows again.

    The count reads up to `exact_scan_max_rows` + 1 rows, and an edge carries its vector inline:
    about a page an edge at 1,536 dimensions, 1,082 pages and 5.3 ms of a query on the realistic
    world of 10,000 facts right after its load (docs/performance.md). A dataset seldom shrinks back
    below the limit (forget, erasure); one that did is searched through its index walk, and exactly
    when the walk finds fewer hits than wanted (`<index>_exact_needed`), until the process ends. The
    created_at tells a dataset from another given the same id (a database restored or recreated)."""

    MAX_DATASETS = 10_000  # then forgotten all at once, to be counted again

    def __init__(self) -> None:
        self._limits: dict[tuple[int, datetime], dict[str, int]] = {}  # index -> exact_max exceeded
        self._lock = threading.Lock()

    def indexes(self, dataset_id: int, created_at: datetime | None, exact_max: int) -> frozenset[str]:
        """The indexes whose rows of the dataset are known to be more than `exact_max`."""
        with self._lock:
            exceeded = dict(self._limits.get((dataset_id, created_at), {}))
        return frozenset(name for name, limit in exceeded.items() if limit >= exact_max)

    def note(
        self, dataset_id: int, created_at: datetime | None, exact_max: int, search_paths: dict[str, str]
    ) -> None:
        """Remember the indexes a retrieval did not search exactly because the dataset was too large
        (`search_paths`: index -> exact, hnsw or hnsw+exact)."""
        large = [name for name, path in search_paths.items() if path != "exact"]
        if created_at is None or not large:
            return
        with self._lock:
            if len(self._limits) >= self.MAX_DATASETS and (dataset_id, created_at) not in self._limits:
                self._limits.clear()
            exceeded = self._limits.setdefault((dataset_id, created_at), {})
            for name in large:
                exceeded[name] = max(exceeded.get(name, 0), exact_max)


LARGE_DATASETS = LargeDatasets()


# --- retrieval ------------------------------------------------------------------------------


def retrieve(
    uow: UnitOfWork,
    dataset: str,
    question: str,
    embedding: Future[list[float]] | Callable[[], list[float]],
    limits: Limits = DEFAULT_LIMITS,
    as_of: datetime | None = None,
    filters: RetrievalFilters | None = None,
) -> Context:
    """The context of `question` in the unit of work's dataset (`uow.dataset_id`, else looked up by
    the keyword statement: NotFound when the user has no such dataset). The transaction is
    committed once the context statement is sent: the retrieval reads, nothing more.

    `embedding` is the question's vector being computed (a Future, already submitted so that
    the keyword search does not wait for it) or a function computing it. Its facts are the live
    ones, or with `as_of` the ones valid at that time, superseded ones included; with `filters`
    (a search's), only what they let through, in every path (db/retrieval_filters.py). ProviderError
    (502) when the vector search fails.
    """
    ranked = limits.retrieval == "ranked"
    limits = ranking.candidate_limits(limits)
    terms = query_terms(question, limits)
    normalized_question = normalized_name(question)
    started = time.perf_counter()
    sent_keywords = graph_reads.send_keyword_seeds(
        uow.conn,
        user_id=uow.user_id,
        dataset=dataset,
        terms=terms,
        term_grams=[term_grams(term) for term in terms],
        normalized_question=normalized_question,
        name_prefixes=name_prefix_keys(normalized_question),
        limit=limits.keyword_seeds,
        window=limits.keyword_window,
        walk_rows=limits.keyword_walk_rows,
        whole_name_score=limits.whole_name_score,
        term_in_name_score=limits.term_in_name_score,
        term_in_description_score=limits.term_in_description_score,
    )
    # Sent after the keyword statement (its tables locked in the order they always were), in its
    # round trip: it needs no vector (nor the dataset's id). Read with the context statement.
    holds_series = series_rows.send_holds_series(uow.conn, uow.user_id, dataset)
    keywords = graph_reads.read_keyword_seeds(sent_keywords)
    keyword_ms = _ms_since(started)
    # The keyword statement looks the dataset up too: a pipelined unit of work has no id yet.
    dataset_id = uow.dataset_id if uow.dataset_id is not None else keywords.dataset_id
    if dataset_id is None:
        raise NotFound(f"dataset {dataset!r} not found")
    keywords_read = time.perf_counter()
    vector = embedding.result() if isinstance(embedding, Future) else embedding()
    waited = time.perf_counter()
    hop_terms = sorted({ranking.stem(term) for term in terms}) if ranked else ()
    exact_max = limits.exact_scan_max_rows
    known_large = LARGE_DATASETS.indexes(dataset_id, keywords.dataset_created_at, exact_max)
    try:
        send = (
            graph_reads.send_context_rows
            if filters is None
            else functools.partial(retrieval_filters.send_filtered_context_rows, filters=filters)
        )
        sent = send(
            uow.conn,
            dataset_id=dataset_id,
            vector=vector,
            keyword_seeds=keywords.seed_ids,
            limits=limits,
            as_of=as_of,
            hop_terms=hop_terms,
            known_large=known_large,
        )
        uow.commit()  # read only: in pipeline mode the statement travels with the COMMIT
        sent.row_factory = tuple_row  # hundreds of rows: read as tuples, not dicts
        rows = sent.fetchall()
        columns = [column.name for column in sent.description]
        dataset_holds_series = series_rows.read_holds_series(holds_series)
    except psycopg.OperationalError:
        raise
    except psycopg.Error as error:
        raise ProviderError(f"the vector store could not be searched ({type(error).__name__})") from None
    context = context_from_tuples(dataset_id, columns, rows)
    context.holds_series = dataset_holds_series
    LARGE_DATASETS.note(dataset_id, keywords.dataset_created_at, exact_max, context.search_paths)
    context.keyword_seeds = keywords.seed_ids
    context.timings_ms = {
        "keyword_seeds": keyword_ms,
        "embedding_wait": (waited - keywords_read) * 1000,  # the question's embedding, after the keywords
        "search_vectors": _ms_since(waited),
    }
    if ranked:
        keep_most_relevant(
            context, terms, dict(zip(keywords.seed_ids, keywords.scores, strict=True)), limits, as_of
        )
    return context


def keep_most_relevant(
    context: Context, terms: list[str], keyword_scores: dict[int, int], limits: Limits, as_of: datetime | None
) -> None:
    """The ranked context (memory/ranking.py): only the most relevant candidates, best first."""
    similarity = context.similarity
    signals = ranking.Signals(
        terms=terms,
        keyword_scores=keyword_scores,
        similarity_seeds=context.similarity_seeds,
        seeds={*context.keyword_seeds, *context.similarity_seeds, *context.fallback_seeds},
        entity_similarity={i: v for (kind, i), v in similarity.items() if kind == "entity"},
        edge_similarity={i: v for (kind, i), v in similarity.items() if kind == "edge"},
        passage_similarity={i: v for (kind, i), v in similarity.items() if kind == "passage"},
        asked_now=as_of is None,
    )
    context.candidates = {
        "entities": len(context.entities),
        "edges": len(context.edges),
        "passages": len(context.passages),
    }
    kept = ranking.rank_context(context.entities, context.edges, context.passages, signals, limits)
    context.entities, context.edges, context.passages = kept.entities, kept.edges, kept.passages
    context.scores = kept.scores


# The columns of a context row that the decoder reads (graph_reads.CONTEXT_SELECT's, by name).
CONTEXT_COLUMNS = (
    "band",
    "id",
    "name",
    "type",
    "description",
    "similarity",
    "model_id",
    "source_id",
    "target_id",
    "relation",
    "artifact_id",
    "valid_at",
    "invalid_at",
    "created_at",
    "expired_at",
    "parent_id",
    "chunk_index",
    "summary",
    "text",
)
_BANDS = {band.value: band for band in Band}  # a dict lookup, not the enum's call, for each row


def context_from_rows(dataset_id: int, rows: list[dict]) -> Context:
    """The Context of rows as mappings (a column its kind has no use for may be left out)."""
    return context_from_tuples(
        dataset_id, CONTEXT_COLUMNS, [tuple(row.get(name) for name in CONTEXT_COLUMNS) for row in rows]
    )


def context_from_tuples(dataset_id: int, columns: Sequence[str], rows: list[Sequence]) -> Context:
    """The Context of the rows of graph_reads.send_context_rows (already in rendering order), as
    tuples of `columns`: a query's 800-odd rows at 10,000 facts are read about 1 ms sooner than as
    dicts (bench/context_rows.py), and its entities and edges built without their dataclasses'
    `__init__` (model.built_from_values: 1.0 ms sooner). Each row's `band` (graph_reads.Band)
    says what it is and why it is there. `model_id` may be missing (None); every other column of
    CONTEXT_COLUMNS is required."""
    at = {name: index for index, name in enumerate(columns)}
    missing = [name for name in CONTEXT_COLUMNS if name not in at and name != "model_id"]
    if missing:
        raise ValueError(f"context rows without the columns {missing}")
    (
        band_,
        id_,
        name_,
        type_,
        description_,
        similarity_,
        model_id_,
        source_,
        target_,
        relation_,
        artifact_,
        valid_,
        invalid_,
        created_,
        expired_,
        parent_,
        chunk_,
        summary_,
        text_,
    ) = (at.get(name) for name in CONTEXT_COLUMNS)
    context = Context(dataset_id=dataset_id)
    names: dict[int, str] = {}  # the entities come first (their bands are first): an edge's ends
    for row in rows:
        band = _BANDS.get(row[band_])
        if band is None:  # a statement and a decoder out of step: an error, never a row dropped
            raise ValueError(f"a context row of an unknown band: {row[band_]!r}")
        kind, row_id = band.kind, row[id_]
        model_id = row[model_id_] if model_id_ is not None else None
        if row[similarity_] is not None:
            context.similarity[(kind, row_id)] = row[similarity_]
        if kind == "entity":
            context.entities.append(
                built_from_values(
                    StoredEntity,
                    id=row_id,
                    name=row[name_],
                    type=row[type_],
                    description=row[description_],
                    model_id=model_id,
                )
            )
            names[row_id] = row[name_]
            if band is Band.SIMILARITY_SEED:
                context.similarity_seeds.append(row_id)
            elif band is Band.FALLBACK_SEED:
                context.fallback = True
                context.fallback_seeds.append(row_id)
        elif kind == "edge":
            context.edges.append(
                built_from_values(
                    StoredEdge,
                    id=row_id,
                    source_id=row[source_],
                    target_id=row[target_],
                    relation=row[relation_],
                    description=row[description_],
                    artifact_id=row[artifact_],
                    valid_at=row[valid_],
                    invalid_at=row[invalid_],
                    created_at=row[created_],
                    expired_at=row[expired_],
                    source=names.get(row[source_], ""),
                    target=names.get(row[target_], ""),
                    model_id=model_id,
                )
            )
            if band is Band.SIMILAR_FACT:
                context.similar_edges.append(row_id)
        elif kind == "passage":
            context.passages.append(Passage(row_id, row[parent_], row[chunk_], row[summary_], row[text_]))
        else:
            context.search_paths[row[name_]] = row[type_]
    return context


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
