"""The response of POST /v1/gb/query with `"answer": false`: the retrieved context, no answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from gligabao.api.models import absent
from gligabao.api.query_models import EdgeEvidence, EntityEvidence, PassageEvidence

if TYPE_CHECKING:  # the client reads this model without the memory core
    from gligabao.memory.retrieval_only import RetrievedContext


class ContextResponse(BaseModel):
    """What the answer would have been written from, in the order the prompt gives it."""

    session_id: str | None = Field(
        default=None, exclude_if=absent, description="the request's session; omitted if it had none"
    )
    context: str = Field(
        description="the context as the LLM would have read it: <graph> (entities, then edges, with their "
        "ids), <passages> when there are some, <current_time> (and <as_of>); ready for a prompt"
    )
    entities: list[EntityEvidence] = Field(description="the entities of the context, as evidence lists them")
    edges: list[EdgeEvidence] = Field(description="the facts of the context, as evidence lists them")
    passages: list[PassageEvidence] = Field(description="the passages of the context")

    @classmethod
    def from_domain(cls, retrieved: RetrievedContext) -> ContextResponse:
        return cls(
            session_id=retrieved.session_id,
            context=retrieved.text,
            entities=[EntityEvidence.from_domain(entity) for entity in retrieved.entities],
            edges=[EdgeEvidence.from_domain(edge) for edge in retrieved.edges],
            passages=[PassageEvidence.from_domain(passage) for passage in retrieved.passages],
        )
