"""Response model of the forget endpoints; `from_domain()` maps the memory core's result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.forget import Forgotten

# Ids are PostgreSQL bigints: a larger number can name no row (a 400, not a database error).
MAX_ID = 2**63 - 1


class DeletedCounts(BaseModel):
    artifacts: int = Field(description="texts and images")
    chunks: int = Field(description="chunks of the forgotten texts")
    entities: int
    edges: int = Field(description="live and superseded")


class ForgetResponse(BaseModel):
    deleted: DeletedCounts

    @classmethod
    def from_domain(cls, forgotten: Forgotten) -> ForgetResponse:
        return cls(
            deleted=DeletedCounts(
                artifacts=forgotten.artifacts,
                chunks=forgotten.chunks,
                entities=forgotten.entities,
                edges=forgotten.edges,
            )
        )
