"""remember for texts (SPEC section 5): chunk -> extract -> embed -> resolve entities ->
resolve facts -> store, with at most 2 LLM calls and 1 embeddings request per unchunked text.

The request arrives validated (the HTTP layer's job). Model calls run outside any database
transaction; everything the call stores is written in one transaction at the end, so a failure
anywhere leaves nothing behind but the `gb_inferences` rows of the model calls made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from gligabao.ai.prompts.extract import Extraction
from gligabao.db import fact_history, graph_writes
from gligabao.db import geo as geo_rows
from gligabao.db import ontologies as ontology_rows
from gligabao.db.connection import UnitOfWork
from gligabao.db.graph_writes import Derivation
from gligabao.memory import fact_resolution, timeseries
from gligabao.memory.chunking import split_text
from gligabao.memory.entity_resolution import send_stored_entities
from gligabao.memory.extraction import TextGraph, extract, merge_extractions
from gligabao.memory.fact_resolution import Judgement
from gligabao.memory.geo import locate_places
from gligabao.memory.ontology import Ontology, OntologyCounts, conform, prompt_section
from gligabao.memory.operation import Operation, operation
from gligabao.memory.ports import Embedder, Memory
from gligabao.memory.timeseries import SeriesInput, StoredSeries
from gligabao.memory.trajectory import recorder_for
from gligabao.model import EndedEdge, Place, StoredEdge, StoredEntity
from gligabao.observability.inferences import CallContext, CallGuard, save_inferences, unsaved_on_failure

# A remember of this many facts or more analyzes the graph's tables that changed enough since their
# last analysis (graph_writes.send_analyze_stale_tables, with the COMMIT's round trip of its
# candidates' read): a dataset being imported has its statistics before autovacuum comes round to it, so that
# the plans of the queries asked right after the import are the ones its size calls for.
LARGE_REMEMBER_FACTS = 20


class AlreadyStored(Exception):
    """The pending artifact a remember was to fill is done, gone or cancelled (its request's jobs
    could not all be queued): nothing more to store."""


@dataclass(frozen=True)
class TextToRemember:
    user_id: str
    dataset: str
    text: str
    session_id: str | None = None
    reference_time: datetime | None = None
    reasoning: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    eval: bool = False  # record the call's trajectory (SPEC section 10)
    memory_kind: str = "knowledge"  # or "episode": stored on the artifact and its chunks
    metadata: Mapping[str, object] = field(
        default_factory=dict
    )  # the caller's labels, on the artifact and its chunks
    # A text remember derives (an observation of a series, a web search's findings) is an artifact
    # of its own kind, with what it was made from.
    artifact_kind: str = "text"
    derivation: Derivation | None = None
    # What the extraction reads when it is not the whole artifact text: a web search's briefing,
    # without the list of its sources (pages are not facts; they are kept in `derivation`).
    extract_from: str | None = None
    # Timeseries stored with the text, in its transaction: a series without anchors is anchored to
    # its artifact, entity and fact selectors match the dataset once the graph is written.
    series: Sequence[SeriesInput] = ()


@dataclass(frozen=True)
class Chunk:
    """One chunk of a long text: its artifact, its place, its length and the summary its
    extraction wrote (None when the model gave none)."""

    artifact_id: int
    index: int
    chars: int
    summary: str | None
    model: str | None  # the model whose extraction wrote the summary, and its reasoning level
    reasoning: str


@dataclass(frozen=True)
class DerivedText:
    """A text a remember derived and remembered after its own (memory/derived.py): an observation
    of one of its series, or what a web search found about one of its entities. `remembered` is
    None when nothing was stored (a series without points, a search that found nothing) or it
    failed (`error`, the service's message: the remember itself stands)."""

    kind: str  # series_observation or web_search
    text: str | None
    remembered: Remembered | None = None
    error: str | None = None
    series: StoredSeries | None = None  # an observation's
    first_at: datetime | None = None  # an observation's: the span of the points it describes
    last_at: datetime | None = None
    entity: StoredEntity | None = None  # a web search's: what it searched for, with `query`
    query: str | None = None
    searches: tuple[str, ...] = ()  # the queries the model ran
    sources: tuple[Mapping[str, str], ...] = ()  # {url, title[, page_age]}
    cost_usd: float | None = None  # the search call's


@dataclass(frozen=True)
class FetchedBy:
    """What one timeseries provider returned for one of a text's key entities: the series stored,
    or why none was (the provider failed, or had nothing in the period)."""

    provider: str
    entity: StoredEntity
    series: tuple[StoredSeries, ...] = ()
    error: str | None = None
    asked: tuple[SeriesInput, ...] = ()  # the series as the provider returned them (clipped)


@dataclass(frozen=True)
class ImageReading:
    """What an image reads as: its theme (chart, photo, ...), its own title, and the blocks of its
    legible text in reading order, each (kind, text)."""

    theme: str
    title: str
    text_blocks: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.text_blocks)


@dataclass(frozen=True)
class Remembered:
    """What one remember stored: the artifact, every entity and fact the text states (created now
    or already stored), the stored facts it superseded, and the number of chunks; whose it is,
    when the text was said (`valid_at`) and stored (`created_at`)."""

    session_id: str | None
    dataset: str
    artifact_id: int
    entities: list[StoredEntity]
    edges: list[StoredEdge]
    superseded: list[EndedEdge]
    chunks: int
    user_id: str
    valid_at: datetime  # the text's reference_time: when it was said or written
    created_at: datetime  # when its artifact was stored
    description: str | None = None  # an image's: what it shows (its artifact's text)
    repeated: bool = False  # an image the dataset held: answered from its first remember
    reading: ImageReading | None = None  # an image's theme, title and legible text
    # The strings of the remember's entities and facts embedded (counted as the gligabao server does).
    embedded_entities: int = 0
    embedded_edges: int = 0
    pieces: tuple[Chunk, ...] = ()  # a chunked text's chunks, in order
    series: tuple[StoredSeries, ...] = ()  # the timeseries stored with the text, as stored
    dataset_id: int | None = None
    observations: tuple[DerivedText, ...] = ()  # of its series (timeseries.observations)
    fetches: tuple[FetchedBy, ...] = ()  # timeseries.fetch: what each provider returned per entity
    web_searches: tuple[DerivedText, ...] = ()
    trajectory: dict | None = None  # an eval call's ATIF trajectory, as stored
    ontology: OntologyCounts | None = None  # what the dataset's ontology mapped and dropped
    fact_edge_ids: tuple[int, ...] = ()  # the edge each fact of the text's graph is (memory/windows.py)


@dataclass(frozen=True)
class PreparedText:
    """A text's extraction and the vectors of the strings it makes the remember embed, made ahead
    of its job (memory/prepare_ahead.py): the job resolves and stores without those model calls."""

    extraction: Extraction
    vector_of: Mapping[str, Sequence[float]]


@dataclass
class Vectors:
    """The vectors of one embeddings request, by what they are of."""

    entities: list[list[float]]
    facts: list[list[float]]
    chunks: list[list[float]]
    summaries: list[list[float] | None]


def remember_text(
    memory: Memory,
    request: TextToRemember,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
    artifact_id: int | None = None,
    prepared: PreparedText | None = None,
    guard: CallGuard | None = None,
) -> Remembered:
    """Remember one text. Both model clients are obtained before any call, so a missing key (503)
    costs no model call. `deadline` is a `time.monotonic()` instant the provider calls end before.
    `artifact_id`: the pending artifact of an asynchronous remember, which the store fills instead
    of inserting one (AlreadyStored when another delivery of the job has filled it). `prepared`:
    the unchunked text's extraction and vectors, made ahead: no extract call, and no embeddings
    request unless a string is missing from it. `guard`: a queued job's (memory/job_guard.py)."""
    with operation(
        memory,
        "remember",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=request.session_id,
        request_id=request_id,
        guard=guard,
    ) as op:
        op.trajectory = recorder_for("remember", op.call, request, request.text)
        llm, embedder, geo = memory.llm, memory.embedder, memory.geo  # 503s before any model call
        now = memory.clock()
        reference_time = request.reference_time or now
        read = request.extract_from or request.text
        chunks = split_text(read, memory.limits)
        op.trajectory.chunking(read, chunks, memory.limits)
        pieces = chunks or [read]
        ahead = prepared is not None and not chunks  # a chunked text is never prepared
        ontology = dataset_ontology(memory, request.user_id, request.dataset)
        extractions = (
            [prepared.extraction]
            if ahead
            else extract(
                llm,
                op.call,
                pieces,
                chunked=bool(chunks),
                reference_time=reference_time,
                now=now,
                reasoning=dict(request.reasoning),
                models=dict(request.models),
                concurrency=memory.limits.extract_concurrency,
                deadline=deadline,
                ontology=prompt_section(ontology) if ontology else None,
            )
        )
        graph = merge_extractions(
            extractions, reference_time, name_max_chars=memory.limits.entity_name_max_chars
        )
        graph, counts = within_ontology(embedder, op.call, graph, ontology, deadline)
        op.trajectory.extraction(graph)
        known = prepared.vector_of if prepared is not None else None
        vectors = embed(embedder, op.call, graph, chunks, deadline, known=known)
        op.trajectory.embedding(vectors)
        judgement = judge_facts(memory, op.call, request, graph, vectors, reference_time, now, deadline)
        places = locate_places(geo, graph.entities)  # {} while geo is off
        op.trajectory.resolution(graph, judgement, places)
        remembered = store(
            memory,
            op,
            request,
            graph,
            chunks,
            vectors,
            judgement,
            reference_time,
            places,
            kind=request.artifact_kind,
            artifact_id=artifact_id,
            model_id=extract_model(llm, request.models),
            derivation=request.derivation,
        )
        return replace(remembered, ontology=counts) if counts else remembered


def dataset_ontology(memory: Memory, user_id: str, dataset: str) -> Ontology | None:
    """The ontology attached to the dataset (None without one, or without the dataset yet)."""
    # One round trip (BEGIN, the SELECT and COMMIT pipelined), the price of every remember's ontology.
    unread = memory.database.read(
        user_id, lambda uow: ontology_rows.of_dataset_unread(uow.conn, user_id, dataset)
    )
    row = unread.fetchone()
    return Ontology.from_json(row["name"], row["parsed"], row["out_of_ontology"]) if row else None


def within_ontology(
    embedder: Embedder,
    call: CallContext,
    graph: TextGraph,
    ontology: Ontology | None,
    deadline: float | None,
) -> tuple[TextGraph, OntologyCounts | None]:
    """The graph conformed to the dataset's ontology (memory/ontology.py), and what that changed;
    the graph as it is without one. The names compared by similarity, if any, are embedded in one
    request of their own (stage embed)."""
    if ontology is None:
        return graph, None
    return conform(graph, ontology, lambda texts: embedder.embed(call, list(texts), deadline=deadline))


def extract_model(llm: object, models: Mapping[str, str], stage: str = "extract") -> str | None:
    """The model a stage runs on: the request's for it, else the LLM's default."""
    return models.get(stage) or getattr(llm, "default_model", None)


def embedded_strings(graph: TextGraph, chunks: Sequence[str]) -> list[str]:
    """What a remember embeds: each distinct string of its entities, facts, chunks and summaries."""
    summaries = [s for s in graph.summaries if s]
    return list(
        dict.fromkeys(
            [
                *(e.embedding_text for e in graph.entities),
                *(f.embedding_text for f in graph.facts),
                *chunks,
                *summaries,
            ]
        )
    )


def embed(
    embedder: Embedder,
    call: CallContext,
    graph: TextGraph,
    chunks: Sequence[str],
    deadline: float | None,
    *,
    known: Mapping[str, Sequence[float]] | None = None,
) -> Vectors:
    """Every string of the call in one embeddings request (each distinct string once), but those
    `known` already (made ahead): none when it holds them all."""
    entity_texts = [entity.embedding_text for entity in graph.entities]
    fact_texts = [fact.embedding_text for fact in graph.facts]
    summaries = graph.summaries or [None] * len(chunks)
    vector_of = {text: list(vector) for text, vector in (known or {}).items()}
    missing = [text for text in embedded_strings(graph, chunks) if text not in vector_of]
    if missing:
        vector_of.update(zip(missing, embedder.embed(call, missing, deadline=deadline), strict=True))
    return Vectors(
        entities=[vector_of[text] for text in entity_texts],
        facts=[vector_of[text] for text in fact_texts],
        chunks=[vector_of[text] for text in chunks],
        summaries=[vector_of[s] if s else None for s in summaries],
    )


def judge_facts(
    memory: Memory,
    call: CallContext,
    request: TextToRemember,
    graph: TextGraph,
    vectors: Vectors,
    reference_time: datetime,
    now: datetime,
    deadline: float | None,
) -> Judgement:
    """Ask the resolve stage about the new facts, when the dataset holds edges to compare them with."""
    if not graph.facts:
        return Judgement()
    with memory.database.transaction(request.user_id, request.dataset, pipeline=True) as uow:
        if uow.dataset_id is None:
            return Judgement()
        call.dataset_id = uow.dataset_id
        read_candidates = fact_resolution.find_candidates(
            uow.conn, uow.dataset_id, graph, vectors.entities, vectors.facts, memory.limits
        )
        if len(graph.facts) >= LARGE_REMEMBER_FACTS:
            graph_writes.send_analyze_stale_tables(uow.conn)  # not under the dataset's lock
    candidates = read_candidates()  # arrived with the COMMIT
    return fact_resolution.judge(
        memory.llm,
        call,
        graph,
        candidates,
        reference_time=reference_time,
        now=now,
        reasoning=dict(request.reasoning),
        models=dict(request.models),
        deadline=deadline,
    )


def store(
    memory: Memory,
    op: Operation,
    request: TextToRemember,
    graph: TextGraph,
    chunks: Sequence[str],
    vectors: Vectors,
    judgement: Judgement,
    reference_time: datetime,
    places: Mapping[str, Place] | None = None,
    *,
    kind: str = "text",
    artifact_id: int | None = None,
    model_id: str | None = None,
    derivation: Derivation | None = None,
) -> Remembered:
    """Write everything in one transaction, under the dataset's lock. `places`: the coordinates
    of the place entities, by normalized name (geo on: one more statement when there are some).
    `kind`: the artifact's ('facts' for the caller's own facts, whose text is them as given).
    `model_id`: the model that extracted the graph (None for the caller's own facts).
    `artifact_id`: the pending artifact of an asynchronous remember, filled instead of inserted."""
    with (
        unsaved_on_failure(op.call),
        memory.database.transaction(
            request.user_id, request.dataset, lock_dataset=True, pipeline=True
        ) as uow,
    ):
        dataset_id = uow.dataset_id
        op.call.dataset_id = dataset_id
        remembered = write_graph(
            memory,
            uow,
            op,
            dataset_id,
            request,
            graph,
            chunks,
            vectors,
            judgement,
            reference_time,
            places,
            kind=kind,
            artifact_id=artifact_id,
            model_id=model_id,
            derivation=derivation,
        )
        if request.series:  # an anchor that names nothing is a 400: the whole remember rolls back
            stored = timeseries.store_series(
                uow, dataset_id, request.series, remembered.artifact_id, limits=memory.limits
            )
            remembered = replace(remembered, series=tuple(stored))
            op.counts["series_stored"] = len(stored)
        save_inferences(uow.conn, op.call)
        remembered = op.trajectory.save_remember(uow.conn, dataset_id, remembered)
    return remembered


def write_graph(
    memory: Memory,
    uow: UnitOfWork,
    op: Operation,
    dataset_id: int,
    request: TextToRemember,
    graph: TextGraph,
    chunks: Sequence[str],
    vectors: Vectors,
    judgement: Judgement,
    reference_time: datetime,
    places: Mapping[str, Place] | None = None,
    *,
    kind: str = "text",
    content_sha256: str | None = None,
    artifact_id: int | None = None,
    model_id: str | None = None,
    derivation: Derivation | None = None,
) -> Remembered:
    """The artifact(s), entities, facts and links of one remember, in the caller's transaction
    (which holds the dataset's lock); `kind` 'image' for an image, whose text is its description.
    `model_id`: the model that extracted the graph, stored with the entities and facts it creates.
    With `artifact_id` (a pending text artifact), the same round trips: an UPDATE of that artifact
    instead of the INSERT, and AlreadyStored (the caller's transaction rolls back) when it is done."""
    conn, now = uow.conn, memory.clock()
    chunk_rows = [
        graph_writes.ChunkRow(text, summary, vector, summary_vector)
        for text, summary, vector, summary_vector in zip(
            chunks, graph.summaries, vectors.chunks, vectors.summaries, strict=True
        )
    ]
    # In pipeline mode (store), three round trips: the artifacts with the read of what the plan
    # decides from, the entities with the new edges' ids, the plan's writes with the COMMIT.
    if artifact_id is None:
        artifacts = graph_writes.send_insert_artifacts(
            conn,
            dataset_id,
            text=request.text,
            session_id=request.session_id,
            reference_time=reference_time,
            chunks=chunk_rows,
            kind=kind,
            content_sha256=content_sha256,
            memory_kind=request.memory_kind,
            metadata=request.metadata,
            derivation=derivation,
        )
    else:
        artifacts = graph_writes.send_fill_pending_artifact(
            conn, dataset_id, artifact_id, reference_time=reference_time, chunks=chunk_rows
        )
    # The entities the names are and the history of the facts between them (and of those the
    # resolve stage judged): read with the artifacts' round trip, planned without a database.
    read = graph_writes.send_match_and_history(
        conn,
        dataset_id,
        [e.normalized_name for e in graph.entities],
        vectors.entities,
        memory.limits.entity_match_similarity,
        fact_resolution.fact_ends(graph),
        sorted(judgement.edge_ids()),
        memory.limits.entity_name_guard,
        exact_max=memory.limits.exact_scan_max_rows,
        walk=memory.limits.hnsw_candidates,
    )
    if artifact_id is None:
        artifact_id, chunk_ids, created_at = graph_writes.read_artifacts(artifacts)
    else:
        filled = graph_writes.read_filled_artifact(artifacts)
        if filled is None:  # rolls the transaction back: nothing is stored twice
            raise AlreadyStored(f"artifact {artifact_id} is stored already")
        chunk_ids, created_at = filled
    matches, seen = graph_writes.read_match_and_history(read, len(graph.entities))
    piece_artifacts = chunk_ids or [artifact_id]
    keys = fact_resolution.entity_keys(graph, matches)
    facts = fact_resolution.plan_facts(
        graph,
        keys,
        vectors.facts,
        judgement,
        seen,
        said_at=reference_time,
        now=now,
        piece_artifacts=piece_artifacts,
        model_id=model_id,
    )
    # The entities stored and the ids of the new edges share a round trip; the rest travels with
    # the COMMIT.
    read_entities = send_stored_entities(
        conn, dataset_id, graph.entities, vectors.entities, matches, model_id=model_id
    )
    new_ids = fact_history.send_new_edge_ids(conn, facts.new_edges) if facts.new_edges else None
    entities = read_entities()
    edge_ids = [row["id"] for row in new_ids.fetchall()] if new_ids is not None else []
    entity_ids = {keys[name]: entity.id for name, entity in entities.items()}
    if places:
        geo_rows.set_coordinates(
            conn,
            dataset_id,
            [(entities[key].id, place.latitude, place.longitude) for key, place in places.items()],
        )
        op.counts["entities_located"] = len(places)
    fact_history.send_apply(conn, dataset_id, facts.plan.writes(entity_ids, edge_ids))
    names = {keys[name]: entity.name for name, entity in entities.items()}
    stated = [facts.plan.stored_edge(row, names, entity_ids, edge_ids, created_at) for row in facts.stated]
    edge_id_of = dict(zip(facts.stated, (edge.id for edge in stated), strict=True))
    _link(uow, request, graph, entities, stated, piece_artifacts)
    mentioned = _distinct(
        [_located(entities[e.normalized_name], places, e.normalized_name) for e in graph.entities]
    )
    superseded = facts.superseded()
    op.counts.update(
        entities_created=sum(e.created for e in mentioned),
        edges_created=sum(edge.created for edge in stated),
        edges_superseded=len(superseded),
    )
    return Remembered(
        session_id=request.session_id,
        dataset=request.dataset,
        artifact_id=artifact_id,
        entities=mentioned,
        edges=stated,
        superseded=superseded,
        chunks=len(chunks),
        user_id=request.user_id,
        valid_at=reference_time,
        created_at=created_at,
        fact_edge_ids=tuple(edge_id_of[row] for row in facts.row_of_fact),
        dataset_id=dataset_id,
        embedded_entities=len(vectors.entities),
        embedded_edges=len(vectors.facts),
        pieces=tuple(
            Chunk(chunk_id, index, len(text), summary, model_id, request.reasoning.get("extract", "none"))
            for index, (chunk_id, text, summary) in enumerate(
                zip(chunk_ids, chunks, graph.summaries, strict=True)
            )
        ),
    )


def _link(
    uow: UnitOfWork,
    request: TextToRemember,
    graph: TextGraph,
    entities: dict[str, StoredEntity],
    stated: Sequence[StoredEdge],
    piece_artifacts: Sequence[int],
) -> None:
    """Provenance: every entity listed or named by an edge, each to the artifact (text or chunk)
    that says it (an edge's is its statements', written with the plan); sessions: the same entities
    and every edge stated (never a contradicted one)."""
    entity_ids = [entities[e.normalized_name].id for e in graph.entities]
    graph_writes.link(
        uow.conn,
        entity_artifacts=[
            (entities[e.normalized_name].id, piece_artifacts[p]) for e in graph.entities for p in e.pieces
        ],
        session_id=request.session_id,
        session_entities=entity_ids,
        session_edges=[edge.id for edge in stated],
    )


def _located(entity: StoredEntity, places: Mapping[str, Place] | None, key: str) -> StoredEntity:
    place = (places or {}).get(key)
    return entity if place is None else replace(entity, latitude=place.latitude, longitude=place.longitude)


def _distinct(entities: list[StoredEntity]) -> list[StoredEntity]:
    """Each stored entity once, in the order first mentioned (two names may be one entity)."""
    return list({entity.id: entity for entity in entities}.values())
