"""query: answer a question from the knowledge graph, with the evidence used (seeds/query.md).

1. The dataset is looked up with BEGIN (404 before anything is paid for); then the question's
   embedding is requested while the keyword search runs, and one statement does the similarity
   searches, the seeds, the expansion and the passages (retrieval.py). Its facts are the live
   ones; with `as_of`, the ones valid at that time, superseded ones included, and the prompt
   says the time the answer is for.
2. Nothing to answer from: the fixed answer, empty evidence, no LLM call.
3. Otherwise the LLM (stage `query`) answers from the rendered context only.
4. The cited ids are validated against the context (evidence.py).
A query writes nothing but its inferences, saved at the end in a transaction of their own.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.prompts.query import QueryReply, query_prompt
from gligabao.ai.stages import level_for
from gligabao.errors import NotFound
from gligabao.memory.evidence import Evidence, build_evidence
from gligabao.memory.operation import operation
from gligabao.memory.ports import Embedder, Memory
from gligabao.memory.retrieval import Context, retrieve
from gligabao.observability.inferences import CallContext, save_inferences

NO_CONTEXT_ANSWER = "I don't have any information in memory to answer that."
EMBEDDING_THREADS = 4  # concurrent queries of one process (the local API serves several at once)


@dataclass(frozen=True)
class Question:
    """A validated query request."""

    user_id: str
    query: str
    dataset: str = "main"
    session_id: str | None = None
    reasoning: dict[str, str] = field(default_factory=dict)  # stage -> level
    models: dict[str, str] = field(default_factory=dict)  # stage -> model
    request_id: str | None = None
    deadline: float | None = None  # time.monotonic() instant the provider calls must end before
    as_of: datetime | None = None  # answer from the facts valid then, superseded ones included


@dataclass(frozen=True)
class Answer:
    session_id: str | None
    answer: str
    evidence: Evidence


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
        llm, embedder = memory.llm, memory.embedder  # 503 before anything when a key is missing
        with memory.database.transaction(question.user_id, question.dataset) as uow:
            if uow.dataset_id is None:
                raise NotFound(f"dataset {question.dataset!r} not found")
            op.call.dataset_id = uow.dataset_id
            embedding = embedding_pool().submit(_embed_question, embedder, op.call, question)
            try:
                context = retrieve(
                    uow, question.dataset, question.query, embedding, memory.limits, as_of=question.as_of
                )
            finally:
                wait_for([embedding])  # never leave the call with its embedding still in flight

        if context.empty:
            text, evidence = NO_CONTEXT_ANSWER, Evidence()
        else:
            system, content = query_prompt(
                context, question.query, memory.clock().replace(microsecond=0), as_of=question.as_of
            )
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

        with memory.database.transaction(question.user_id) as uow:
            save_inferences(uow.conn, op.call)
        op.counts.update(_counts(context, evidence))
    return Answer(session_id=question.session_id, answer=text, evidence=evidence)


def _embed_question(embedder: Embedder, call: CallContext, question: Question) -> list[float]:
    return embedder.embed(call, [question.query], "embed", deadline=question.deadline)[0]


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
