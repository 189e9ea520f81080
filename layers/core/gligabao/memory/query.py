"""query: answer a question from the knowledge graph, with the evidence used (seeds/query.md).

1. The dataset is looked up with BEGIN (404 before anything is paid for); then the question's
   embedding is requested while the keyword search runs, and one statement does the similarity
   searches, the seeds, the expansion and the passages (retrieval.py). Its facts are the live
   ones; with `as_of`, the ones valid at that time, superseded ones included, and the prompt
   says the time the answer is for.
2. Nothing to answer from: the fixed answer, empty evidence, no LLM call.
3. Otherwise the LLM (stage `query`) answers from the rendered context only.
4. The cited ids are validated against the context (evidence.py).
With geo on (SPEC section 9), the `detect_geo` stage lists the places of the question while the
retrieval runs; only a nearby search (`geo_nearby`, `geo_radius_km`) uses them: the resolved
places are stored as entities with coordinates and, with the matched entities that have
coordinates, anchor a search of the entities within the radius, which join the context.
Without it, a query writes nothing but its inferences, saved at the end in a transaction of
their own. The timeseries anchored to the context's entities and facts (their statistics and
latest points) follow the graph and the passages in what is left of the token budget.
"""

from __future__ import annotations

import functools
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass

from gligabao.ai.prompts.query import QueryReply, context_sections, query_prompt
from gligabao.ai.stages import level_for
from gligabao.db.connection import UnitOfWork
from gligabao.errors import NotFound
from gligabao.limits import Limits
from gligabao.memory import retrieval_only, timeseries
from gligabao.memory.evidence import Evidence, build_evidence
from gligabao.memory.geo import detect_places, search_nearby
from gligabao.memory.operation import operation
from gligabao.memory.ports import Embedder, Memory
from gligabao.memory.question import Question
from gligabao.memory.ranking import estimated_tokens
from gligabao.memory.retrieval import Context, retrieve
from gligabao.memory.trajectory import recorder_for
from gligabao.model import Nearby
from gligabao.observability.inferences import CallContext, save_inferences, unsaved_on_failure

NO_CONTEXT_ANSWER = "I don't have any information in memory to answer that."
KNOWN_DATASETS_MAX = 10_000  # (user, dataset) pairs a container remembers it found
EMBEDDING_THREADS = 4  # concurrent queries of one process (the local API serves several at once)


@dataclass(frozen=True)
class Answer:
    session_id: str | None
    answer: str
    evidence: Evidence
    nearby: Nearby | None = None  # the nearby search, when asked and the question has a place
    trajectory: dict | None = None  # an eval call's ATIF trajectory, as stored


def answer(memory: Memory, question: Question) -> Answer:
    """The answer to `question` from the user's dataset, with its evidence."""
    with operation(
        memory,
        "query",
        user_id=question.user_id,
        dataset=question.dataset,
        session_id=question.session_id,
        request_id=question.request_id,
    ) as op:
        op.trajectory = recorder_for("query", op.call, question, question.query)
        llm, embedder = memory.llm if question.answer else None, memory.embedder  # 503 before anything
        geo = memory.geo if question.answer else None  # detect_geo is an LLM call
        # Pipelined (db/connection.py): BEGIN travels with the keyword statement, which also looks
        # the dataset up, and COMMIT with the context statement: 2 round trips on a warm connection.
        # A dataset this container has not queried yet is looked up with BEGIN first (one more
        # round trip), so that a missing one is a 404 before any model call.
        known = getattr(memory, "known_datasets", {})  # the container's (bootstrap.Bundle)
        key = (question.user_id, question.dataset)
        seen = key in known
        calls = QuestionCalls()
        limits = question.limits or memory.limits

        def first_read(uow: UnitOfWork) -> Context:
            if not seen and uow.dataset_id is None:
                raise NotFound(f"dataset {question.dataset!r} not found")
            calls.start(embedder, llm if geo is not None else None, op.call, question)
            try:
                return retrieve(
                    uow,
                    question.dataset,
                    question.query,
                    calls.embedding,
                    limits,
                    as_of=question.as_of,
                    filters=question.filters,
                )
            finally:
                calls.wait()  # never leave the call with a model call still in flight

        try:
            context = memory.database.read(
                question.user_id, first_read, None if seen else question.dataset, scope=question.dataset
            )
        except NotFound:  # deleted since this container last queried it
            known.pop(key, None)
            raise
        op.call.dataset_id = context.dataset_id
        known_dataset(known, key)
        op.trajectory.retrieval(question.query, context, limits)
        question_places = calls.places.result() if calls.places is not None else []
        if geo is not None and question.nearby_radius_km is not None:
            context.nearby, around = search_nearby(
                memory,
                geo,
                user_id=question.user_id,
                dataset=question.dataset,
                places=question_places,
                matched_ids=[*context.keyword_seeds, *context.similarity_seeds],
                radius_km=question.nearby_radius_km,
                as_of=question.as_of,
            )
            context.add_nearby(around)
        if (
            question.with_series and question.as_of is None
        ):  # a series holds no history of what was known when
            context.series_lines = series_lines(memory, question.user_id, context, limits)

        if context.empty and question.answer:
            text, evidence = NO_CONTEXT_ANSWER, Evidence()
        else:
            system, content = query_prompt(
                context, question.query, memory.clock().replace(microsecond=0), as_of=question.as_of
            )
            if not question.answer:  # what this prompt holds, returned instead of sent
                return retrieval_only.retrieved(memory, op, question, context, content)
            reply = llm.complete(
                op.call,
                "query",
                system=system,
                content=content,
                reply_model=QueryReply,
                reasoning=level_for(question.reasoning, "query"),
                model=question.models.get("query"),
                max_tokens=memory.limits.query_max_output_tokens,
                deadline=question.deadline,
            )
            text, evidence = reply.answer, build_evidence(reply, context)

        with unsaved_on_failure(op.call), memory.database.transaction(question.user_id, pipeline=True) as uow:
            save_inferences(uow.conn, op.call)  # BEGIN, the INSERT and COMMIT: one round trip
            trajectory = op.trajectory.save_query(uow.conn, context.dataset_id, text, evidence)
        op.counts.update(_counts(context, evidence))
        if geo is not None:
            op.counts.update(_geo_counts(question_places, context.nearby))
    return Answer(
        session_id=question.session_id,
        answer=text,
        evidence=evidence,
        nearby=context.nearby,
        trajectory=trajectory,
    )


@dataclass
class QuestionCalls:
    """The question's model calls (its embedding; the places it names, with geo on), started once
    with the retrieval's first read, and not again when that read is sent again."""

    embedding: Future | None = None
    places: Future | None = None

    def start(
        self, embedder: Embedder, geo_llm: object | None, call: CallContext, question: Question
    ) -> None:
        if self.embedding is not None:
            return
        self.embedding = embedding_pool().submit(_embed_question, embedder, call, question)
        if geo_llm is not None:
            self.places = embedding_pool().submit(
                detect_places,
                geo_llm,
                call,
                question.query,
                question.reasoning,
                question.models,
                question.deadline,
            )

    def wait(self) -> None:
        wait_for([future for future in (self.embedding, self.places) if future is not None])


def series_lines(memory: Memory, user_id: str, context: Context, limits: Limits) -> list[str]:
    """The lines of the timeseries anchored to the context's entities and facts, as many as the
    context's token budget leaves room for after the graph, the passages and what is nearby (best anchored first).
    One round trip of its own (the retrieval's transaction has committed), and none for a dataset
    without a series (the retrieval read that with its context statement) or a context without an
    entity or a fact."""
    if not context.holds_series or not (context.entities or context.edges) or limits.context_series == 0:
        return []
    with memory.database.transaction(user_id, pipeline=True) as uow:
        found = timeseries.context_series(
            uow,
            context.dataset_id,
            [entity.id for entity in context.entities],
            [edge.id for edge in context.edges],
            limits,
        )
    used = sum(
        estimated_tokens(line) for section in context_sections(context) for line in section.splitlines()
    )
    room = limits.context_token_budget - used - estimated_tokens("<series>") - estimated_tokens("</series>")
    kept = []
    for line in timeseries.render_series_lines(found):
        cost = estimated_tokens(line)
        if cost > room:
            break
        kept.append(line)
        room -= cost
    return kept


def _embed_question(embedder: Embedder, call: CallContext, question: Question) -> list[float]:
    return embedder.embed(call, [question.query], "embed", deadline=question.deadline)[0]


def known_dataset(known: dict[tuple[str, str], bool], key: tuple[str, str]) -> None:
    if len(known) >= KNOWN_DATASETS_MAX:  # bounded: a long-lived container forgets them all at once
        known.clear()
    known[key] = True


@functools.cache
def embedding_pool() -> ThreadPoolExecutor:
    """Per-container: the threads that embed questions while the keyword search runs."""
    return ThreadPoolExecutor(max_workers=EMBEDDING_THREADS, thread_name_prefix="gb-embed")


def _counts(context: Context, evidence: Evidence) -> dict[str, int]:
    return {
        "keyword_seeds": len(context.keyword_seeds),
        "similarity_seeds": len(context.similarity_seeds),
        "similar_edges": len(context.similar_edges),
        "context_entities": len(context.entities),
        "context_edges": len(context.edges),
        "context_passages": len(context.passages),
        "evidence_entities": len(evidence.entities),
        "evidence_edges": len(evidence.edges),
        "evidence_passages": len(evidence.passages),
    }


def _geo_counts(places: list[str], nearby: Nearby | None) -> dict[str, int]:
    return {
        "geo_places": len(places),
        "geo_anchors": len(nearby.anchors) if nearby else 0,
        "geo_nearby": len(nearby.entities) if nearby else 0,
    }
