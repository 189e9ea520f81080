"""A window of texts (bulk import): a job of a batch takes the short texts queued behind its own
in its dataset (up to `bulk_window_texts`), and remembers them together with what one text at a
time would store.

- Extraction: the window's texts are extracted and embedded at once, `extract_concurrency` at a
  time (each call honours the provider's retry-after: ai/retries.py); a text prepared ahead by the
  window before (memory/prepare_ahead.py) makes no call.
- Judgement: one resolve call for the window. It shows the stored candidates of every text's facts
  (read before the window) and the window's new facts in the order said, so that a later text's
  fact can repeat or contradict an earlier text's (`duplicate_of_new`, `contradicts_new`).
- Store: one transaction under the dataset's lock, the texts in the queue's order (reference
  time), each through remember's own `write_graph`: its entities resolve against the graph and
  the texts stored before it in the window. Before each text, its candidates are read again as
  its own remember would read them, and the window's decisions are kept only about those (an
  earlier text's fact by the edge it became): the same judgement as one text at a time, when the
  model decides about a pair of facts the same way in both calls.
- Failures: a text whose extraction fails ends the window before it (its own job runs it then,
  with its retries; the texts behind it, extracted already, are kept as prepared for their
  window); any other failure fails the attempt, and the job's retry runs its text alone
  (memory/async_remember.py), the texts behind it windowed again by their own jobs. A window stores
  all its texts or none, and a text already done (a redelivery) is never stored twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.prompts.extract import Extraction
from gligabao.ai.prompts.resolve import (
    RESOLVE_MAX_TOKENS,
    FactDecision,
    FactLine,
    Resolution,
    SaidFact,
    WindowFactDecision,
    WindowResolution,
    window_resolve_prompt,
)
from gligabao.ai.stages import level_for
from gligabao.db import graph_writes
from gligabao.db import jobs as job_rows
from gligabao.db import prepared as prepared_rows
from gligabao.db.jobs import QueuedBehind
from gligabao.db.prepared import WaitingText
from gligabao.memory import fact_resolution
from gligabao.memory.extraction import TextFact, TextGraph, extract, merge_extractions
from gligabao.memory.fact_resolution import Candidates, judgement_from
from gligabao.memory.geo import locate_places
from gligabao.memory.ontology import Ontology, prompt_section
from gligabao.memory.operation import Operation
from gligabao.memory.ports import Memory
from gligabao.memory.remember import (
    AlreadyStored,
    PreparedText,
    TextToRemember,
    Vectors,
    dataset_ontology,
    embed,
    embedded_strings,
    extract_model,
    within_ontology,
    write_graph,
)
from gligabao.model import StoredEdge
from gligabao.observability.inferences import CallContext, save_inferences
from gligabao.observability.logging import get_logger
from gligabao.observability.monitoring import current_report

logger = get_logger()

# A reply line per new fact (~40 tokens): a window of many facts needs more than one text's 4,096.
REPLY_TOKENS_PER_FACT = 48
WINDOW_RESOLVE_MAX_TOKENS = 16_384


@dataclass
class WindowText:
    """One text of a window: its remember, its model calls, and what its extraction gave."""

    artifact_id: int
    request: TextToRemember
    call: CallContext
    prepared: PreparedText | None = None
    extraction: Extraction | None = None
    graph: TextGraph | None = None
    vectors: Vectors | None = None
    failure: Exception | None = None

    @property
    def reference_time(self) -> datetime:
        assert self.request.reference_time is not None  # a queued text always has one
        return self.request.reference_time


@dataclass
class WindowJudgement:
    """The window's resolve reply: the decision about each new fact, by its number, and each
    text's facts' numbers."""

    numbers: list[list[int]] = field(default_factory=list)  # [text][fact index] -> number
    decisions: dict[int, WindowFactDecision] = field(default_factory=dict)


def texts_along(
    queued: Sequence[QueuedBehind],
    *,
    window: int,
    max_chars: int,
    job_options: Mapping,
    first_facts: int = 0,
) -> list[QueuedBehind]:
    """The texts a window takes along behind its first: the queued ones, in order, up to the first
    that cannot join it (a long text, facts, a running job, other options, or facts known from its
    prepared extraction past what one resolve reply can judge beside the `first_facts` of the first
    text and those known of the texts before it), at most `window` - 1. A text that
    `within_reply_budget` would cut anyway is not taken along: its prepared row, vectors and all,
    is read by the window that stores it, not by every window before."""
    along = []
    known_facts = first_facts
    for text in queued[: window - 1]:
        known_facts += text.prepared_facts or 0
        joins = (
            text.kind == "text"
            and text.status == "pending"
            and text.chars <= max_chars
            and text.job_options == dict(job_options)
            and known_facts <= reply_room()
        )
        if not joins:
            break
        along.append(text)
    return along


def reply_room() -> int:
    """The facts one window's resolve reply can judge (about 340)."""
    return WINDOW_RESOLVE_MAX_TOKENS // REPLY_TOKENS_PER_FACT


def remember_window(
    memory: Memory,
    texts: Sequence[WindowText],
    *,
    reasoning: Mapping[str, str],
    models: Mapping[str, str],
    deadline: float | None = None,
    prepared_options: Mapping | None = None,
) -> list[int]:
    """Remember the window's texts (the job's own first); the ids of the artifacts stored. Raises
    the first text's failure when its extraction fails, AlreadyStored when it is done already.
    `prepared_options`: what the texts behind a cut, extracted already, are kept as prepared with
    (memory/prepare_ahead.py), so that their window does not extract them again."""
    report = current_report()
    counts: dict[str, int] = {}
    first = texts[0].request
    if report is not None:  # the job's monitoring event: every call and change of the window
        report.dataset, report.session_id = first.dataset, first.session_id
        report.call, report.counts = texts[0].call, counts
        report.more_calls.extend(t.call for t in texts[1:])
    try:
        now = memory.clock()
        # The dataset's ontology steers every text of the window as it steers a text alone.
        ontology = dataset_ontology(memory, first.user_id, first.dataset)
        _extract_all(memory, texts, reasoning, models, now, deadline, ontology)
        ready = within_reply_budget(_up_to_first_failure(texts))
        judged = _judge(memory, ready, reasoning, models, now, deadline)
        stored = _store(memory, ready, judged, models, counts)
        counts["texts_stored"] = len(stored)
        if prepared_options is not None:
            _keep_extracted(memory, texts[len(ready) :], prepared_options)
        return stored
    finally:
        _save_inferences_left(memory, texts)


def _extract_all(
    memory: Memory,
    texts: Sequence[WindowText],
    reasoning: Mapping[str, str],
    models: Mapping[str, str],
    now: datetime,
    deadline: float | None,
    ontology: Ontology | None,
) -> None:
    workers = min(len(texts), memory.limits.extract_concurrency)  # the provider's rate limits
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="window") as pool:
        for text in texts:
            pool.submit(_extract_one, memory, text, reasoning, models, now, deadline, ontology)


def _extract_one(
    memory: Memory,
    text: WindowText,
    reasoning: Mapping[str, str],
    models: Mapping[str, str],
    now: datetime,
    deadline: float | None,
    ontology: Ontology | None,
) -> None:
    try:
        if text.prepared is not None:
            extractions = [text.prepared.extraction]
        else:
            extractions = extract(
                memory.llm,
                text.call,
                [text.request.text],
                chunked=False,
                reference_time=text.reference_time,
                now=now,
                reasoning=dict(reasoning),
                models=dict(models),
                concurrency=1,
                deadline=deadline,
                ontology=prompt_section(ontology) if ontology else None,
            )
        text.extraction = extractions[0]
        graph = merge_extractions(
            extractions, text.reference_time, name_max_chars=memory.limits.entity_name_max_chars
        )
        graph, _ = within_ontology(memory.embedder, text.call, graph, ontology, deadline)
        known = text.prepared.vector_of if text.prepared is not None else None
        text.vectors = embed(memory.embedder, text.call, graph, [], deadline, known=known)
        text.graph = graph
    except Exception as exc:  # the window ends before this text (`_up_to_first_failure`)
        text.failure = exc


def _up_to_first_failure(texts: Sequence[WindowText]) -> list[WindowText]:
    """The texts before the first one whose extraction failed; the first text's own failure is
    the attempt's."""
    for position, text in enumerate(texts):
        if text.failure is not None:
            if position == 0:
                raise text.failure
            logger.warning(
                "remember.window.cut",
                extra={"artifact_id": text.artifact_id, "texts": position, "error": str(text.failure)},
            )
            return list(texts[:position])
    return list(texts)


def within_reply_budget(texts: Sequence[WindowText]) -> list[WindowText]:
    """The texts whose facts one resolve reply can judge (WINDOW_RESOLVE_MAX_TOKENS, about 340
    facts), the first always: a window of fact-dense texts is cut, not sent to a reply that would
    be cut short and then retried text by text. The texts behind are kept as extracted."""
    room = reply_room()
    facts = 0
    for position, text in enumerate(texts):
        facts += len(text.graph.facts) if text.graph is not None else 0
        if position and facts > room:
            logger.info("remember.window.cut", extra={"texts": position, "reason": "reply budget"})
            return list(texts[:position])
    return list(texts)


def _judge(
    memory: Memory,
    texts: Sequence[WindowText],
    reasoning: Mapping[str, str],
    models: Mapping[str, str],
    now: datetime,
    deadline: float | None,
) -> WindowJudgement:
    """One resolve call: every fact of the window, numbered in the order said, beside the stored
    candidates of them all (read before the window); no call when nothing can be compared."""
    judged = WindowJudgement()
    said: list[SaidFact] = []
    for text in texts:
        assert text.graph is not None
        numbers = list(range(len(said), len(said) + len(text.graph.facts)))
        judged.numbers.append(numbers)
        said.extend(
            SaidFact(_line(number, fact), text.reference_time)
            for number, fact in zip(numbers, text.graph.facts, strict=True)
        )
    stored = _stored_candidates(memory, texts)
    texts_with_facts = sum(bool(numbers) for numbers in judged.numbers)
    if not said or (not stored and texts_with_facts < 2):
        return judged
    system, content = window_resolve_prompt(
        said,
        [
            FactLine(e.id, e.source, e.relation, e.target, e.description, e.valid_at, e.invalid_at)
            for e in stored
        ],
        current_time=now,
    )
    reply = memory.llm.complete(
        texts[0].call,
        "resolve",
        system=system,
        content=content,
        reply_model=WindowResolution,
        reasoning=level_for(dict(reasoning), "resolve"),
        model=models.get("resolve"),
        max_tokens=min(WINDOW_RESOLVE_MAX_TOKENS, max(RESOLVE_MAX_TOKENS, REPLY_TOKENS_PER_FACT * len(said))),
        deadline=deadline,
    )
    for decision in reply.facts:
        if 0 <= decision.fact < len(said) and decision.fact not in judged.decisions:
            judged.decisions[decision.fact] = decision
    return judged


def _line(number: int, fact: TextFact) -> FactLine:
    return FactLine(
        number,
        fact.source.name,
        fact.relation,
        fact.target.name,
        fact.description,
        fact.valid_at,
        fact.invalid_at,
    )


def _stored_candidates(memory: Memory, texts: Sequence[WindowText]) -> list[StoredEdge]:
    """The live edges any fact of the window may repeat or contradict, as the graph is before it:
    each text's, every fact judged (one may restate a live edge now and not at its turn)."""
    first = texts[0].request
    with memory.database.transaction(first.user_id, first.dataset, pipeline=True) as uow:
        if uow.dataset_id is None:
            return []
        reads = [
            fact_resolution.find_candidates(
                uow.conn,
                uow.dataset_id,
                text.graph,
                text.vectors.entities,
                text.vectors.facts,
                memory.limits,
                restated_too=True,
            )
            for text in texts
            if text.graph is not None and text.vectors is not None and text.graph.facts
        ]
        graph_writes.send_analyze_stale_tables(uow.conn)  # a window is a batch: see LARGE_REMEMBER_FACTS
    edges: dict[int, StoredEdge] = {}
    for read in reads:
        for edge in read().edges:
            edges.setdefault(edge.id, edge)
    return list(edges.values())


def _store(
    memory: Memory,
    texts: Sequence[WindowText],
    judged: WindowJudgement,
    models: Mapping[str, str],
    counts: dict[str, int],
) -> list[int]:
    """Every text of the window in one transaction, in order, each as its own remember stores it."""
    saved = [text.call.saved for text in texts]
    try:
        return _store_in_one_transaction(memory, texts, judged, models, counts)
    except BaseException:
        # In pipeline mode the inferences' INSERTs were only queued, and rolled back with the rest.
        for text, count in zip(texts, saved, strict=True):
            text.call.saved = count
        counts.clear()  # nothing was stored
        raise


def _store_in_one_transaction(
    memory: Memory,
    texts: Sequence[WindowText],
    judged: WindowJudgement,
    models: Mapping[str, str],
    counts: dict[str, int],
) -> list[int]:
    first = texts[0].request
    stored = []
    with memory.database.transaction(first.user_id, first.dataset, lock_dataset=True, pipeline=True) as uow:
        dataset_id = uow.dataset_id
        fillable = job_rows.still_pending(uow.conn, [t.artifact_id for t in texts])
        if texts[0].artifact_id not in fillable:  # rolls back: nothing is stored twice
            raise AlreadyStored(f"artifact {texts[0].artifact_id} is stored already")
        edge_of_number: dict[int, int] = {}
        for position, text in enumerate(texts):
            text.call.dataset_id = dataset_id
            if text.artifact_id not in fillable:  # forgotten, cancelled or done meanwhile
                continue
            assert text.graph is not None and text.vectors is not None
            candidates = Candidates([], [])
            if text.graph.facts:
                candidates = fact_resolution.find_candidates(
                    uow.conn, dataset_id, text.graph, text.vectors.entities, text.vectors.facts, memory.limits
                )()
            reply = _reply_of(judged, position, candidates, edge_of_number)
            op = Operation("remember", text.call, text.request.dataset)
            remembered = write_graph(
                memory,
                uow,
                op,
                dataset_id,
                text.request,
                text.graph,
                [],
                text.vectors,
                judgement_from(reply, candidates),
                text.reference_time,
                locate_places(memory.geo, text.graph.entities),
                artifact_id=text.artifact_id,
                model_id=extract_model(memory.llm, models),
            )
            edge_of_number.update(zip(judged.numbers[position], remembered.fact_edge_ids, strict=True))
            stored.append(text.artifact_id)
            for name, count in op.counts.items():
                counts[name] = counts.get(name, 0) + count
        for text in texts:
            save_inferences(uow.conn, text.call)
        # What was prepared for them is used (the texts not stored are done or gone meanwhile).
        prepared_rows.drop(uow.conn, [text.artifact_id for text in texts])
    logger.info("remember.window", extra={"texts": len(texts), "stored": len(stored)})
    return stored


def _reply_of(
    judged: WindowJudgement, position: int, candidates: Candidates, edge_of_number: Mapping[int, int]
) -> Resolution:
    """The window's decisions about one text's facts, as its own resolve call would have answered:
    an earlier text's fact is the edge it became; a candidate the text's own call would not show
    is dropped (`judgement_from`)."""
    shown = {edge.id for edge in candidates.edges}
    facts = []
    for index, number in enumerate(judged.numbers[position]):
        decision = judged.decisions.get(number)
        if decision is None:
            continue
        earlier = {edge_of_number.get(n) for n in decision.contradicts_new if n < number} - {None}
        duplicates = [decision.duplicate_of]
        if decision.duplicate_of_new is not None and decision.duplicate_of_new < number:
            duplicates.append(edge_of_number.get(decision.duplicate_of_new))
        facts.append(
            FactDecision(
                fact=index,
                duplicate_of=next((d for d in duplicates if d in shown), None),
                contradicts=sorted({*decision.contradicts, *earlier}),
            )
        )
    return Resolution(facts=facts)


def _keep_extracted(memory: Memory, behind: Sequence[WindowText], options: Mapping) -> None:
    """The texts behind a cut that were extracted and embedded, kept as prepared for their window;
    a failure to keep them only costs their calls again."""
    kept = [t for t in behind if t.failure is None and t.prepared is None and t.extraction is not None]
    if not kept:
        return
    first = kept[0].request
    try:
        with memory.database.transaction(first.user_id, first.dataset) as uow:
            for text in kept:
                assert text.graph is not None and text.vectors is not None and text.extraction is not None
                vector_of = {
                    **dict(
                        zip(
                            (e.embedding_text for e in text.graph.entities),
                            text.vectors.entities,
                            strict=True,
                        )
                    ),
                    **dict(
                        zip((f.embedding_text for f in text.graph.facts), text.vectors.facts, strict=True)
                    ),
                }
                embedded = embedded_strings(text.graph, [])
                waiting = WaitingText(
                    text.artifact_id,
                    uow.dataset_id,
                    text.request.text,
                    text.request.session_id,
                    text.reference_time,
                )
                prepared_rows.save(
                    uow.conn,
                    waiting,
                    options,
                    text.extraction.model_dump(mode="json"),
                    embedded,
                    [vector_of[s] for s in embedded],
                )
    except Exception as exc:
        logger.warning("remember.window.not_kept", extra={"error_type": type(exc).__name__})


def _save_inferences_left(memory: Memory, texts: Sequence[WindowText]) -> None:
    """The inferences the window's transaction did not save (it failed, or never ran)."""
    calls = [t.call for t in texts if t.call.saved != len(t.call.inferences)]
    if not calls:
        return
    try:
        with memory.database.transaction(texts[0].request.user_id) as uow:
            for call in calls:
                save_inferences(uow.conn, call)
    except Exception:  # recording cost must never hide the window's own error
        logger.warning("could not record inferences", extra={"count": sum(len(c.inferences) for c in calls)})
