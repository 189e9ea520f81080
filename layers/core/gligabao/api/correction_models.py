"""Request and response models of PATCH /v1/gb/edges/{id} and POST /v1/gb/edges/{id}/restore: a fact
corrected, or restored, by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from gligabao.api.facts_models import FactTime, Relation, normalized_name
from gligabao.api.forget_models import MAX_ID
from gligabao.api.models import EdgeOut
from gligabao.api.validation import (
    CONTROL_RANGES,
    NON_BLANK_TEXT_PATTERN,
    SPACE_RANGES,
    UserId,
    character_class,
)
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.corrections import Corrected, Correction, Restore, Restored

CHANGEABLE = ("description", "target", "relation", "valid_at", "invalid_at")
DESCRIPTION_MAX_CHARS = 4000  # a fact is one sentence; as long as a chunk at most
REASON_MAX_CHARS = 1000
# A name with something left once whitespace and control characters are removed (no NUL at all).
TARGET_NAME_PATTERN = f"^[^\\u0000]*[^{character_class(SPACE_RANGES, CONTROL_RANGES)}][^\\u0000]*$"


def _target(value: Any) -> Any:
    """An entity id (a positive integer) or a name (a non-blank string); a boolean is neither."""
    if isinstance(value, bool) or value is None:
        raise ValueError("must be an entity's name or id")
    if isinstance(value, int):
        if not 1 <= value <= MAX_ID:
            raise ValueError("an entity id is a positive integer")
        return value
    if isinstance(value, str):
        return _target_name(value)
    raise ValueError("must be an entity's name or id")


def _target_name(value: str) -> str:
    """The name as the facts' names reach the graph: inner whitespace collapsed (facts_models'
    rule), then control characters removed by extraction's own clean_text (escapes that would reach
    terminals and prompts); refused when nothing is left."""
    # imported here, not with the module: the client reads these models without the memory core
    from gligabao.memory.extraction import clean_text

    if not normalized_name(value):
        raise ValueError("must not be empty")
    words = (clean_text(word) for word in value.split())
    name = " ".join(word for word in words if word)
    if not normalized_name(name):
        raise ValueError("must not be only control characters")
    return name


Target = Annotated[
    int | str,
    BeforeValidator(_target),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                {"type": "string", "minLength": 1, "pattern": TARGET_NAME_PATTERN},
            ],
            "description": "the entity the fact now points to: its id, or its name (an entity of that "
            "name in the fact's dataset, created with type unknown when there is none); control "
            "characters are removed from a name, as from the names of facts",
        }
    ),
]


def _description(value: Any) -> Any:
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("must not be blank")
        if len(value) > DESCRIPTION_MAX_CHARS:
            raise ValueError(f"is at most {DESCRIPTION_MAX_CHARS} characters")
        return value.strip()
    return value  # pydantic says what it should be


Description = Annotated[
    str | None,
    BeforeValidator(_description),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": DESCRIPTION_MAX_CHARS,
            "pattern": NON_BLANK_TEXT_PATTERN,
            "description": "the fact as one plain sentence",
        }
    ),
]


class CorrectionRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"anyOf": [{"required": [name]} for name in CHANGEABLE]},
    )

    user_id: UserId | None = Field(
        default=None, description="the fact's user: here or in the query string (both: the same)"
    )
    description: Description = Field(
        default=None,
        description="the fact as one plain sentence; when the target or relation changes without one, "
        "a sentence naming the new ends is made (Alice works at Initech.)",
    )
    target: Target | None = None
    relation: Relation | None = Field(
        default=None, description="the relation the fact now is (stored as lowercase snake_case)"
    )
    valid_at: FactTime = Field(default=None, description="when the fact began to hold (RFC 3339)")
    invalid_at: FactTime = Field(
        default=None,
        description="when it stopped holding (RFC 3339); given alone, it ends the fact without a replacement",
    )
    reason: str | None = Field(
        default=None, max_length=REASON_MAX_CHARS, description="why, kept in the correction artifact"
    )

    @model_validator(mode="after")
    def _changes_something(self) -> CorrectionRequest:
        if all(getattr(self, name) is None for name in CHANGEABLE):
            raise ValueError(f"a correction sets at least one of {', '.join(CHANGEABLE)}")
        return self

    def correction(self, edge_id: int, user_id: str) -> Correction:
        from gligabao.memory.corrections import Correction

        return Correction(
            user_id=user_id,
            edge_id=edge_id,
            description=self.description,
            target=self.target,
            relation=self.relation,
            valid_at=self.valid_at,
            invalid_at=self.invalid_at,
            reason=self.reason,
        )


class SupersededEdge(BaseModel):
    id: int
    invalid_at: str = Field(description="RFC 3339: when the superseded fact stopped holding")
    expired_at: str | None = Field(description="RFC 3339: when the correction superseded it")


class CorrectionResponse(BaseModel):
    edge: EdgeOut = Field(
        description="the fact as it now stands: the new edge, or the same edge ended (only invalid_at given)"
    )
    superseded: list[SupersededEdge] = Field(
        description="the edge the correction expired; empty when it only ended it"
    )
    artifact_id: int = Field(description="the artifact of kind correction: who asked, the previous values")

    @classmethod
    def from_domain(cls, corrected: Corrected) -> CorrectionResponse:
        superseded = corrected.superseded
        return cls(
            edge=EdgeOut.from_domain(corrected.edge),
            superseded=[]
            if superseded is None
            else [
                SupersededEdge(
                    id=superseded.id,
                    invalid_at=rfc3339(superseded.invalid_at),
                    expired_at=rfc3339(superseded.expired_at),
                )
            ],
            artifact_id=corrected.artifact_id,
        )


def user_of(query: str | None, body: str | None) -> str:
    """The user a request names, in its query string or its body (as the GET and DELETE routes of
    the same resources take it); both must be the same user."""
    from gligabao.errors import BadRequest

    if query is not None and body is not None and query != body:
        raise BadRequest("user_id: the query string and the body name different users")
    user_id = query if query is not None else body
    if user_id is None:
        raise BadRequest("user_id: required, in the query string or the body")
    return user_id


class RestoreRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UserId | None = Field(
        default=None, description="the fact's user: here or in the query string (both: the same)"
    )
    superseder: Literal["end", "keep"] = Field(
        description="what becomes of the fact that superseded this one: `end`, it ends where the restored "
        "fact begins (as a later text would say); `keep`, the two were wrongly judged to contradict and "
        "both hold"
    )
    reason: str | None = Field(
        default=None, max_length=REASON_MAX_CHARS, description="why, kept in the restore's artifact"
    )

    def restore(self, edge_id: int, user_id: str) -> Restore:
        from gligabao.memory.corrections import Restore

        return Restore(user_id=user_id, edge_id=edge_id, superseder=self.superseder, reason=self.reason)


class RestoreResponse(BaseModel):
    edge: EdgeOut = Field(description="the fact restored, as it now stands")
    superseder: EdgeOut | None = Field(
        description="the fact that had superseded it, as it now stands (ended, or kept); null when it was forgotten"
    )
    artifact_id: int = Field(description="the artifact of kind correction: who asked, why, what was restored")

    @classmethod
    def from_domain(cls, restored: Restored) -> RestoreResponse:
        return cls(
            edge=EdgeOut.from_domain(restored.edge),
            superseder=EdgeOut.from_domain(restored.superseder) if restored.superseder else None,
            artifact_id=restored.artifact_id,
        )
