"""query with `"answer": false`: the retrieved context, for agents that put memory into their own
prompt, without the LLM call.

memory/query.py builds the query prompt exactly as for an answer and hands it here instead of to
the LLM: what is returned is what the prompt would have held (its entities, edges and passages, and
its rendered text up to the question), whatever decides that context, with one embeddings request
and no LLM call (detect_geo included: a nearby search needs the answer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gligabao.memory.operation import Operation
from gligabao.memory.ports import Memory
from gligabao.memory.question import Question
from gligabao.memory.retrieval import Context
from gligabao.model import Passage, StoredEdge, StoredEntity
from gligabao.observability.inferences import save_inferences


@dataclass(frozen=True)
class RetrievedContext:
    """The context of a question, in the order the prompt renders it."""

    session_id: str | None
    text: str  # the rendered context: <graph>, <passages>, <current_time> (and <as_of>)
    entities: list[StoredEntity] = field(default_factory=list)
    edges: list[StoredEdge] = field(default_factory=list)  # with their endpoints' names
    passages: list[Passage] = field(default_factory=list)
    context: Context | None = None  # the ranked context itself: its scores and why each item is there


def retrieved(
    memory: Memory, op: Operation, question: Question, context: Context, prompt_content: str
) -> RetrievedContext:
    """The context `prompt_content` (the query stage's user content) was rendered from; the call's
    inferences (the question's embedding) saved, its counts reported."""
    with memory.database.transaction(question.user_id, pipeline=True) as uow:
        save_inferences(uow.conn, op.call)  # BEGIN, the INSERT and COMMIT: one round trip
    op.counts.update(
        keyword_seeds=len(context.keyword_seeds),
        similarity_seeds=len(context.similarity_seeds),
        similar_edges=len(context.similar_edges),
        context_entities=len(context.entities),
        context_edges=len(context.edges),
        context_passages=len(context.passages),
    )
    return RetrievedContext(
        session_id=question.session_id,
        text=context_text(prompt_content, question.query),
        entities=list(context.entities),
        edges=list(context.edges),
        passages=list(context.passages),
        context=context,
    )


def context_text(prompt_content: str, question: str) -> str:
    """The prompt's content without its last part, the question (ai/prompts/query.py ends with it)."""
    asked = f"\n<question>\n{question}\n</question>"
    return prompt_content.removesuffix(asked).rstrip("\n")
