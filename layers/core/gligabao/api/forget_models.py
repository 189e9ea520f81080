"""Response model of the forget endpoints; `from_domain()` maps the memory core's result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.db.erasure import ErasedRows
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


class ErasureReceipt(BaseModel):
    """What an erasure of a user erased: the proof an operator keeps (its log says the same, with a
    digest of the user's id instead of the id)."""

    erased_at: str = Field(description="RFC 3339: when it ran (the database clock, just before the commit)")
    rows: dict[str, int] = Field(
        description="rows deleted per table (cascades included), as the database counted them; {} when "
        "the user had nothing stored"
    )
    jobs_cancelled: int = Field(description="queued or running remembers of the user, cancelled with it")
    user_digest: str = Field(description="SHA-256 of the user_id, hex: what the erasure's log names")

    @classmethod
    def from_domain(cls, erased: ErasedRows, user_digest: str) -> ErasureReceipt:
        return cls(
            erased_at=rfc3339(erased.erased_at),
            rows=erased.rows,
            jobs_cancelled=erased.jobs_cancelled,
            user_digest=user_digest,
        )
