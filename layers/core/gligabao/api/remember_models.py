"""The request and response of POST /v1/gb/remember (SPEC section 5).

Unknown fields are refused (400 naming them), so a misspelt `sesion_id` is never silently dropped.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from gligabao.ai.stages import (
    REMEMBER_ALIASES,
    REMEMBER_IDLE_REASONING,
    REMEMBER_STAGES,
    parse_models,
    parse_reasoning,
)
from gligabao.api.facts_models import FactsInput
from gligabao.api.metadata_models import (
    METADATA_MAX_BYTES,
    METADATA_MAX_KEYS,
    METADATA_RULES,
    Metadata,
    serialized_size,
)
from gligabao.api.models import MODEL_ID_DESCRIPTION, absent, edge_fields
from gligabao.api.trajectory_models import (
    EVAL_DESCRIPTION,
    TRAJECTORY_DESCRIPTION,
    TRAJECTORY_ID_DESCRIPTION,
    Trajectory,
    stored_trajectory_id,
    trajectory_out,
)
from gligabao.api.validation import (
    NON_BLANK_TEXT_PATTERN,
    RFC3339,
    DatasetField,
    Documented,
    SessionId,
    UserId,
    model_policy,
    models_schema,
    reasoning_schema,
    server_bundle,
    time_schema,
)
from gligabao.errors import BadRequest
from gligabao.limits import Limits
from gligabao.model import IMAGE_MEDIA_TYPES, MEMORY_KINDS, StoredEdge, sniffed_media_type
from gligabao.timefmt import parse_rfc3339, rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.async_remember import QueuedText
    from gligabao.memory.facts import FactsToRemember
    from gligabao.memory.images import ImageToRemember
    from gligabao.memory.remember import Remembered, TextToRemember

ASYNC_EVAL = (
    "; asynchronous, the trajectory is stored with the job's transaction: "
    "GET /v1/gb/trajectories?user_id=&dataset=&artifact_id= finds it once the artifact is done"
)
# Base64 with its exact padding, not empty.
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
_BASE64 = re.compile(BASE64_PATTERN.removeprefix("^").removesuffix("$"))


def _reasoning(value: Any) -> dict[str, str]:
    try:
        reasoning = parse_reasoning(
            value, REMEMBER_STAGES, "extract", aliases=REMEMBER_ALIASES, idle=REMEMBER_IDLE_REASONING
        )
        model_policy().check_reasoning(reasoning)
        return reasoning
    except BadRequest as error:
        raise ValueError(error.message) from None


def _models(value: Any) -> dict[str, str]:
    try:
        models = parse_models(value, REMEMBER_STAGES, aliases=REMEMBER_ALIASES)
        model_policy().check_models(models)
        return models
    except BadRequest as error:
        raise ValueError(error.message) from None


def _reference_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or not RFC3339.fullmatch(value.strip()):
        raise ValueError("reference_time must be an RFC 3339 time with an offset, e.g. 2025-01-31T09:00:00Z")
    try:
        return parse_rfc3339(value)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before the year 1 in UTC
        raise ValueError("reference_time must fall within the years 1 to 9999 in UTC") from None
    except ValueError:
        raise ValueError("reference_time is not a valid time") from None


Reasoning = Annotated[
    dict[str, str],
    BeforeValidator(_reasoning),
    Documented(
        lambda: reasoning_schema(
            REMEMBER_STAGES, "extract", aliases=REMEMBER_ALIASES, idle=REMEMBER_IDLE_REASONING
        )
    ),
]
Models = Annotated[
    dict[str, str],
    BeforeValidator(_models),
    Documented(lambda: models_schema(REMEMBER_STAGES, aliases=REMEMBER_ALIASES)),
]
ReferenceTime = Annotated[
    datetime | None,
    BeforeValidator(_reference_time),
    WithJsonSchema(
        time_schema(
            "RFC 3339 with an offset, within the years 1 to 9999 in UTC: when the text was said or "
            "written; default now"
        )
    ),
]
Text = Annotated[
    str | None,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN},
                {"type": "null"},
            ],
            "description": "the text to remember, not blank; exactly one of text, image and facts",
        }
    ),
]


def _caption_schema() -> dict[str, Any]:
    most = server_bundle().limits.image_caption_max_chars
    return {
        "anyOf": [{"type": "string", "maxLength": most}, {"type": "null"}],
        "description": f"with an image only: the sender's words about it (at most {most} characters), "
        "given to the model with the image",
    }


def _caption_within_limit(value: Any) -> Any:
    most = server_bundle().limits.image_caption_max_chars
    if isinstance(value, str) and len(value) > most:
        raise ValueError(f"caption is longer than {most} characters")
    return value


Caption = Annotated[str | None, BeforeValidator(_caption_within_limit), Documented(_caption_schema)]


def _checked_text(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("text must not be empty")
    if value is not None and "\x00" in value:  # PostgreSQL text cannot hold it
        raise ValueError("text must not contain NUL characters")
    return value.strip() if value is not None else None


class ImageInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    media_type: str = Field(
        description="image/png, image/jpeg, image/gif or image/webp",
        json_schema_extra={"enum": list(IMAGE_MEDIA_TYPES)},
    )
    data: str = Field(
        description="the image, base64 (padded); at most 4 MiB decoded (GB_IMAGE_MAX_BYTES; 413 above), "
        "its bytes of the media_type",
        json_schema_extra={"pattern": BASE64_PATTERN, "contentEncoding": "base64"},
    )

    @field_validator("media_type")
    @classmethod
    def _known_media_type(cls, value: str) -> str:
        if value not in IMAGE_MEDIA_TYPES:
            raise ValueError(f"image.media_type must be one of {', '.join(IMAGE_MEDIA_TYPES)}")
        return value

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        if not _BASE64.fullmatch(
            value
        ):  # the documented pattern, padding exact ("QQ==", not "QQ" or "QUJD=")
            raise ValueError("image.data must be non-empty base64")
        return value

    def decoded(self) -> bytes:
        try:
            return base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("image.data must be non-empty base64") from None


def _bare_image(value: Any) -> Any:
    """The gligabao server's form, an image as bare base64, as our object: its type read from its
    first bytes."""
    if not isinstance(value, str):
        return value
    if not _BASE64.fullmatch(value):
        raise ValueError("image must be non-empty base64, or an object of media_type and data")
    sniffed = sniffed_media_type(base64.b64decode(value[:16]))  # 12 bytes: every type's magic
    if sniffed is None:
        raise ValueError(f"image: its bytes are none of {', '.join(IMAGE_MEDIA_TYPES)}")
    return {"media_type": sniffed, "data": value}


BARE_IMAGE_SCHEMA = {
    "type": "string",
    "pattern": BASE64_PATTERN,
    "contentEncoding": "base64",
    "description": "the gligabao server's form: the image as base64 (padded), its type (png, jpeg, gif or "
    "webp) read from its first bytes; 400 for another",
}


class _OrBareImage:
    """Documents the bare base64 form beside the object form."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        schema = handler(core_schema)
        return {**schema, "anyOf": [*schema.get("anyOf", [schema]), BARE_IMAGE_SCHEMA]}


Image = Annotated[ImageInput | None, BeforeValidator(_bare_image), _OrBareImage()]


class RememberRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        # check_content's rule, documented: exactly one of text, image and facts, a caption only with
        # an image.
        json_schema_extra={
            "oneOf": [
                {
                    "required": ["text"],
                    "properties": {"text": {"type": "string"}, "caption": {"type": "null"}},
                },
                {
                    "required": ["image"],
                    "properties": {"image": {"anyOf": [{"type": "object"}, {"type": "string"}]}},
                },
                {
                    "required": ["facts"],
                    "properties": {"facts": {"type": "object"}, "caption": {"type": "null"}},
                },
            ]
        },
    )

    user_id: UserId
    dataset: DatasetField
    session_id: SessionId = None
    text: Text = None
    image: Image = None
    facts: FactsInput | None = Field(
        default=None,
        description="instead of a text: entities and edges already extracted, in the extraction's shape; "
        "no extraction call, the rest as for a text (the artifact, of kind facts, holds them as given)",
    )
    caption: Caption = None
    kind: str | None = Field(
        default=None,
        description="with a text or facts: knowledge (the default) or episode (an event anchored in time, "
        "as the gligabao server's episodes), stored on the artifact; not with an image",
        json_schema_extra={"enum": list(MEMORY_KINDS)},
    )
    reference_time: ReferenceTime = None
    metadata: Metadata
    reasoning: Reasoning = Field(default_factory=dict)
    models: Models = Field(default_factory=dict)
    run_async: bool = Field(
        default=False,
        alias="async",
        description="true: answer 202 at once and remember the text in the background "
        "(GET /v1/gb/artifacts/{id} shows the status); a text longer than "
        "GB_ASYNC_REMEMBER_THRESHOLD_CHARS (24,000 characters by default) is always remembered so; "
        "an image is always remembered at once",
    )
    eval: StrictBool = Field(default=False, description=EVAL_DESCRIPTION + ASYNC_EVAL)

    @model_validator(mode="before")
    @classmethod
    def _image_reasoning(cls, data: Any) -> Any:
        """One reasoning level sets an image request's main stage, `image` (a text's is `extract`)."""
        if (
            isinstance(data, dict)
            and data.get("image") is not None
            and isinstance(data.get("reasoning"), str)
        ):
            return {**data, "reasoning": {"image": data["reasoning"]}}
        return data

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str | None) -> str | None:
        if value is not None and value not in MEMORY_KINDS:
            raise ValueError(f"kind must be {' or '.join(MEMORY_KINDS)}")
        return value

    @property
    def memory_kind(self) -> str:
        return self.kind or MEMORY_KINDS[0]

    @field_validator("caption")
    @classmethod
    def _caption(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("text")
    @classmethod
    def _not_empty(cls, value: str | None) -> str | None:
        return _checked_text(value)

    def runs_async(self, limits: Limits) -> bool:
        """Asynchronous when asked, or when the text is too long to remember within the API's 29 s."""
        return self.run_async or (
            self.text is not None and len(self.text) > limits.async_remember_threshold_chars
        )

    def text_to_remember(self) -> TextToRemember:
        # imported here, not with the module: the client reads responses with these models without the memory core
        from gligabao.memory.remember import TextToRemember

        return TextToRemember(
            user_id=self.user_id,
            dataset=self.dataset,
            text=self.text,
            session_id=self.session_id,
            reference_time=self.reference_time,
            reasoning=self.reasoning,
            models=self.models,
            eval=self.eval,
            memory_kind=self.memory_kind,
            metadata=self.metadata or {},
        )

    def queued(self) -> QueuedText:
        """The text (or facts) of an asynchronous remember."""
        from gligabao.memory.async_remember import QueuedText

        if self.facts is not None:
            given = self.facts.as_given()
            return QueuedText(
                given, self.session_id, self.reference_time, "facts", self.memory_kind, self.metadata or {}
            )
        return QueuedText(
            self.text,
            self.session_id,
            self.reference_time,
            memory_kind=self.memory_kind,
            metadata=self.metadata or {},
        )

    def facts_to_remember(self) -> FactsToRemember:
        from gligabao.memory.facts import FactsToRemember

        assert self.facts is not None  # check_content's rule
        return FactsToRemember(
            user_id=self.user_id,
            dataset=self.dataset,
            facts=self.facts.extraction(),
            given=self.facts.as_given(),
            session_id=self.session_id,
            reference_time=self.reference_time,
            reasoning=self.reasoning,
            models=self.models,
            memory_kind=self.memory_kind,
            metadata=self.metadata or {},
        )

    def image_to_remember(self) -> ImageToRemember:
        from gligabao.memory.images import ImageToRemember

        assert self.image is not None  # check_content's rule
        return ImageToRemember(
            user_id=self.user_id,
            dataset=self.dataset,
            media_type=self.image.media_type,
            data=self.image.decoded(),
            caption=self.caption,
            session_id=self.session_id,
            reference_time=self.reference_time,
            reasoning=self.reasoning,
            models=self.models,
            eval=self.eval,
            metadata=self.metadata or {},
        )

    def check_content(self, limits: Limits | None = None) -> None:
        """Exactly one of text, image and facts; a caption goes with an image; facts within the limits."""
        if sum(content is not None for content in (self.text, self.image, self.facts)) != 1:
            raise BadRequest("exactly one of text, image and facts is required")
        if self.caption is not None and self.image is None:
            raise BadRequest("caption is only for an image")
        if self.kind is not None and self.image is not None:
            raise BadRequest("kind is for a text or facts, not an image")
        if self.eval and self.facts is not None:
            raise BadRequest("eval: trajectories are recorded for texts and images, not facts")
        if self.facts is not None and limits is not None:
            self.facts.check(limits)


class RememberedEntity(BaseModel):
    id: int
    name: str
    type: str
    description: str
    created: bool = Field(description="created by this call (false: an entity already stored)")
    latitude: float | None = Field(
        default=None, exclude_if=absent, description="a place's coordinates from the geo resolver (geo on)"
    )
    longitude: float | None = Field(default=None, exclude_if=absent, description="with latitude")
    model_id: str | None = Field(default=None, exclude_if=absent, description=MODEL_ID_DESCRIPTION)


class RememberedEdge(BaseModel):
    id: int
    source_id: int
    target_id: int
    source: str
    target: str
    relation: str
    description: str
    artifact_id: int | None
    valid_at: str | None = Field(description="RFC 3339, UTC: when the fact began to hold")
    invalid_at: str | None = Field(
        default=None, exclude_if=absent, description="when it stopped holding; omitted while it holds"
    )
    created_at: str
    expired_at: str | None = Field(
        default=None,
        exclude_if=absent,
        description="set when the fact is superseded: the text was said before a stored fact that "
        "contradicts it, which holds where the two overlap; omitted while live",
    )
    created: bool = Field(description="created by this call (false: a stored fact the text restates)")
    model_id: str | None = Field(default=None, exclude_if=absent, description=MODEL_ID_DESCRIPTION)

    @classmethod
    def from_domain(cls, edge: StoredEdge) -> RememberedEdge:
        return cls(**edge_fields(edge), created=edge.created)


class SupersededEdge(BaseModel):
    id: int
    invalid_at: str | None
    expired_at: str


class OntologyApplied(BaseModel):
    name: str = Field(description="the dataset's ontology")
    mapped_entity_types: int = Field(
        description="entities whose extracted type became the nearest allowed one"
    )
    dropped_entities: int = Field(description="entities of a type outside the ontology, not stored")
    mapped_relations: int = Field(description="facts whose relation became the nearest allowed one")
    dropped_relations: int = Field(
        description="facts not stored: no allowed relation fits them, or one of their entities was dropped"
    )


class RememberResponse(BaseModel):
    user_id: str = Field(description="the request's user")
    session_id: str | None = Field(
        default=None, exclude_if=absent, description="the request's session; omitted without one"
    )
    dataset: str
    kind: str | None = Field(
        default=None,
        exclude_if=absent,
        description="a text's or facts': knowledge or episode, as stored; omitted for an image",
        json_schema_extra={"enum": list(MEMORY_KINDS)},
    )
    artifact_id: int
    valid_at: str = Field(
        description="RFC 3339, UTC: when the text was said or written (the request's reference_time, "
        "else the time of the remember)"
    )
    created_at: str = Field(description="RFC 3339, UTC: when its artifact was stored")
    entities: list[RememberedEntity]
    edges: list[RememberedEdge]
    superseded: list[SupersededEdge]
    invalidated_edges: list[int] = Field(
        description="the ids of the stored facts this text superseded, in the order of superseded "
        "(which has their invalid_at and expired_at)"
    )
    chunks: int = Field(description="chunks of a long text; 0 when it was not chunked")
    description: str | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's: what it shows, the text of its artifact; omitted for a text",
    )
    repeated: bool | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's: true when the dataset already held it (the answer is its first "
        "remember's: no model call, no new artifact, that artifact's id and session); omitted for a text",
    )
    trajectory: Trajectory | None = Field(default=None, exclude_if=absent, description=TRAJECTORY_DESCRIPTION)
    ontology: OntologyApplied | None = Field(
        default=None,
        exclude_if=absent,
        description="what the dataset's ontology mapped and dropped; omitted when it has none",
    )

    @classmethod
    def from_domain(cls, remembered: Remembered, kind: str | None = None) -> RememberResponse:
        return cls(
            user_id=remembered.user_id,
            session_id=remembered.session_id,
            dataset=remembered.dataset,
            kind=kind,
            artifact_id=remembered.artifact_id,
            valid_at=rfc3339(remembered.valid_at),
            created_at=rfc3339(remembered.created_at),
            entities=[
                RememberedEntity(
                    id=e.id,
                    name=e.name,
                    type=e.type,
                    description=e.description,
                    created=e.created,
                    latitude=e.latitude,
                    longitude=e.longitude,
                    model_id=e.model_id,
                )
                for e in remembered.entities
            ],
            edges=[RememberedEdge.from_domain(edge) for edge in remembered.edges],
            superseded=[
                SupersededEdge(id=e.id, invalid_at=rfc3339(e.invalid_at), expired_at=rfc3339(e.expired_at))
                for e in remembered.superseded
            ],
            invalidated_edges=[e.id for e in remembered.superseded],
            chunks=remembered.chunks,
            description=remembered.description,
            repeated=remembered.repeated if remembered.description is not None else None,
            trajectory=trajectory_out(remembered.trajectory),
            ontology=OntologyApplied(**asdict(remembered.ontology)) if remembered.ontology else None,
        )


class EvalRememberResponse(RememberResponse):
    """POST /v1/gb/eval/remember: the remember response, its trajectory's id beside it."""

    trajectory_id: int = Field(description=TRAJECTORY_ID_DESCRIPTION)
    trajectory: Trajectory = Field(description="the call's ATIF v1.8 trajectory, as stored")

    @classmethod
    def from_remembered(cls, remembered: Remembered, kind: str | None) -> EvalRememberResponse:
        response = RememberResponse.from_domain(remembered, kind)
        fields = {name: getattr(response, name) for name in RememberResponse.model_fields}
        return cls(**fields, trajectory_id=stored_trajectory_id(remembered.trajectory))


# --- asynchronous remember: the 202, and POST /v1/gb/remember/batch ------------------------------


class AcceptedResponse(BaseModel):
    artifact_id: int = Field(description="GET /v1/gb/artifacts/{artifact_id} shows its status")
    status: str = Field(description="pending", json_schema_extra={"enum": ["pending"]})


BatchTextValue = Annotated[
    str,
    WithJsonSchema(
        {"type": "string", "minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN, "description": "not blank"}
    ),
]


class BatchText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: BatchTextValue
    session_id: SessionId = None
    reference_time: ReferenceTime = None
    metadata: Metadata

    @field_validator("text")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        return _checked_text(value)

    def queued(self, shared: dict | None = None) -> QueuedText:
        """The text to queue, its metadata the batch's `shared` ones updated by its own."""
        from gligabao.memory.async_remember import QueuedText

        return QueuedText(
            self.text,
            self.session_id,
            self.reference_time,
            metadata={**(shared or {}), **(self.metadata or {})},
        )


class BatchRememberRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    dataset: DatasetField
    texts: list[BatchText] = Field(
        description="1 to GB_BATCH_REMEMBER_MAX_TEXTS (100) texts, each with its own session and reference "
        "time; applied in order of reference_time (a missing one: the time of the request)",
        min_length=1,
    )
    metadata: Metadata
    reasoning: Reasoning = Field(default_factory=dict)
    models: Models = Field(default_factory=dict)
    eval: StrictBool = Field(
        default=False,
        description="true: every text's remember is an eval call, its trajectory stored with its job: "
        "GET /v1/gb/trajectories?user_id=&dataset=&artifact_id= finds each once its artifact is done",
    )

    def check_size(self, limits: Limits) -> None:
        if len(self.texts) > limits.batch_remember_max_texts:
            raise BadRequest(f"texts: at most {limits.batch_remember_max_texts} texts per batch")
        for index, text in enumerate(self.texts):
            merged = {**(self.metadata or {}), **(text.metadata or {})}
            if serialized_size(merged) > METADATA_MAX_BYTES or len(merged) > METADATA_MAX_KEYS:
                raise BadRequest(f"texts[{index}].metadata: with the batch's, {METADATA_RULES}")


class BatchAcceptedResponse(BaseModel):
    dataset: str
    artifacts: list[AcceptedResponse] = Field(description="one per text, in the order of the request")
