"""query: answer a question from the knowledge graph, with the evidence used (seeds/query.md).

1. The question's embedding is requested while the keyword search runs; then one statement
   does the similarity searches, the seeds, the expansion and the passages (retrieval.py).
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
from typing import TYPE_CHECKING

from gligabao.ai.prompts.query import QUERY_MAX_TOKENS, QueryReply, query_prompt
from gligabao.ai.stages import level_for
from gligabao.db.connection import user_transaction
from gligabao.memory.evidence import build_evidence, empty_evidence
from gligabao.memory.operation import operation
from gligabao.memory.retrieval import DEFAULT_LIMITS, Context, RetrievalLimits, retrieve
from gligabao.observability.inferences import save_inferences
from gligabao.timefmt import utcnow

if TYPE_CHECKING:
    from gligabao.ai.embeddings import Embedder
    from gligabao.ai.llm import LLM

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


def answer(
    question: Question,
    *,
    llm: LLM,
    embedder: Embedder,
    limits: RetrievalLimits = DEFAULT_LIMITS,
    now: datetime | None = None,
) -> dict:
    """The response body of POST /v1/gb/query."""
    with operation(
        "query",
        user_id=question.user_id,
        dataset=question.dataset,
        session_id=question.session_id,
        request_id=question.request_id,
    ) as op:
        embedding = _embedding_pool().submit(_embed_question, embedder, op.call, question)
        try:
            context = retrieve(question.user_id, question.dataset, question.query, embedding, limits)
        finally:
            wait_for([embedding])  # never leave the call with its embedding still in flight
        op.call.dataset_id = context.dataset_id

        if context.empty:
            answer_text, evidence = NO_CONTEXT_ANSWER, empty_evidence()
        else:
            system, content = query_prompt(context, question.query, (now or utcnow()).replace(microsecond=0))
            reply = llm.complete(
                op.call,
                "query",
                system=system,
                content=content,
                reply_model=QueryReply,
                reasoning=level_for(question.reasoning, "query"),
                model=question.models.get("query"),
                max_tokens=QUERY_MAX_TOKENS,
                deadline=question.deadline,
            )
            answer_text, evidence = reply.answer, build_evidence(reply, context)

        with user_transaction(question.user_id) as conn:
            save_inferences(conn, op.call)
        op.counts = _counts(context, evidence)

    body: dict = {"answer": answer_text, "evidence": evidence}
    if question.session_id is not None:
        body = {"session_id": question.session_id, **body}
    return body


def _embed_question(embedder: Embedder, call, question: Question) -> list[float]:
    return embedder.embed(call, [question.query], "embed", deadline=question.deadline)[0]


@functools.cache
def _embedding_pool() -> ThreadPoolExecutor:
    """Per-container: the threads that embed questions while the keyword search runs."""
    return ThreadPoolExecutor(max_workers=EMBEDDING_THREADS, thread_name_prefix="gb-embed")


def _counts(context: Context, evidence: dict) -> dict[str, int]:
    return {
        "keyword_seeds": len(context.keyword_seeds),
        "similarity_seeds": len(context.similarity_seeds),
        "similar_edges": len(context.similar_edges),
        "context_entities": len(context.entities),
        "context_edges": len(context.edges),
        "context_passages": len(context.passages),
        "evidence_entities": len(evidence["entities"]),
        "evidence_edges": len(evidence["edges"]),
        "evidence_passages": len(evidence["passages"]),
    }
