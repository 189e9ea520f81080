"""The request and response of POST /v1/gb/remember (SPEC section 5).

Unknown fields are refused (400 naming them), so a misspelt `sesion_id` is never silently dropped.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import asdict
from datetime import datetime, timedelta
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

from gligabao.ai.prompts.image import BLOCK_KINDS, THEMES
from gligabao.ai.stages import (
    REMEMBER_ALIASES,
    REMEMBER_IDLE_REASONING,
    REMEMBER_MODEL_STAGES,
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
from gligabao.api.timeseries_models import SeriesList, StoredSeriesOut
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
from gligabao.model import IMAGE_MEDIA_TYPES, MEMORY_KINDS, StoredEdge, StoredEntity, sniffed_media_type
from gligabao.timefmt import day_or_instant, parse_rfc3339, rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.async_remember import QueuedText
    from gligabao.memory.facts import FactsToRemember
    from gligabao.memory.images import ImageToRemember
    from gligabao.memory.remember import (
        Chunk,
        DerivedText,
        FetchedBy,
        ImageReading,
        Remembered,
        TextToRemember,
    )

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
        models = parse_models(value, REMEMBER_MODEL_STAGES, aliases=REMEMBER_ALIASES)
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
    Documented(lambda: models_schema(REMEMBER_MODEL_STAGES, aliases=REMEMBER_ALIASES)),
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


class FetchIn(BaseModel):
    """`timeseries.fetch`: series fetched by the deployment's timeseries providers for the text's
    entities, over a window around the reference time."""

    model_config = ConfigDict(extra="forbid")

    providers: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]] | None = Field(
        default=None, max_length=20, description="the providers to ask; all when left out"
    )
    before: str = Field(default="30d", description="how far before the reference time: 30d, 12h, 90m or 0")
    after: str = Field(default="0", description="how far after it")

    def spans(self) -> dict[str, timedelta]:
        """The window's bounds, as remember_text_and_more takes them."""
        from gligabao.memory.series_providers import span

        return {"fetch_before": span(self.before, "before"), "fetch_after": span(self.after, "after")}

    @field_validator("before", "after")
    @classmethod
    def _span(cls, value: str, info: Any) -> str:
        from gligabao.memory.series_providers import span

        try:
            span(value, f"timeseries.fetch.{info.field_name}")
        except BadRequest as error:
            raise ValueError(error.message) from None
        return value


class TimeseriesIn(BaseModel):
    """remember's `timeseries` (with a text): series to store and anchor to what the text yields,
    series to fetch, and whether to remember an observation of each."""

    model_config = ConfigDict(extra="forbid")

    series: SeriesList | None = Field(
        default=None,
        description="series to store, as POST /v1/gb/timeseries takes them; a series without anchors is "
        "anchored to the text's artifact, entity and fact selectors match what the dataset holds once the text is stored",
    )
    fetch: FetchIn | None = Field(
        default=None, description="fetch series from the deployment's timeseries providers (503 without one)"
    )
    observations: StrictBool = Field(
        default=False,
        description="also remember an observation of each series stored (at most 10): a text written from "
        "its points, extracted into the graph like any text (an extraction call each)",
    )

    @model_validator(mode="after")
    def _something(self) -> TimeseriesIn:
        if not self.series and self.fetch is None:
            raise ValueError("timeseries needs series, fetch or both")
        return self


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
    timeseries: TimeseriesIn | None = Field(
        default=None,
        description="with a text: timeseries to store with it, fetch and observe (docs/timeseries.md)",
    )
    web_search: StrictBool = Field(
        default=False,
        description="with a text: also search the web for recent events about its key entities and remember "
        "what is found (artifacts of kind web_search); off unless the deployment enables it (GB_WEB_SEARCH)",
    )

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
            series=tuple(series.domain() for series in (self.timeseries.series or ()))
            if self.timeseries is not None
            else (),
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
        for name, asked in (("timeseries", self.timeseries is not None), ("web_search", self.web_search)):
            if asked and self.text is None:
                raise BadRequest(
                    f"{name} does not apply to an {'image' if self.image is not None else 'import of facts'}"
                )
            if asked and limits is not None and self.runs_async(limits):
                raise BadRequest(
                    f"{name}: a remember with it is answered at once; not with async, nor with a text longer "
                    f"than {limits.async_remember_threshold_chars} characters"
                )
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


class ChunkSummary(BaseModel):
    text: str
    model: str | None = Field(default=None, exclude_if=absent, description="the model that wrote it")
    reasoning: str = Field(description="its reasoning level")


class RememberedChunk(BaseModel):
    artifact_id: int = Field(description="the chunk's artifact")
    index: int = Field(description="its place in the text, from 0")
    chars: int = Field(description="its length in characters")
    summary: ChunkSummary | None = Field(
        default=None, exclude_if=absent, description="what its extraction summarized; omitted without one"
    )

    @classmethod
    def from_domain(cls, chunk: Chunk) -> RememberedChunk:
        summary = (
            ChunkSummary(text=chunk.summary, model=chunk.model, reasoning=chunk.reasoning)
            if chunk.summary is not None
            else None
        )
        return cls(artifact_id=chunk.artifact_id, index=chunk.index, chars=chunk.chars, summary=summary)


class TextBlockOut(BaseModel):
    kind: str = Field(json_schema_extra={"enum": list(BLOCK_KINDS)})
    text: str


def _reading(reading: ImageReading | None) -> dict[str, Any]:
    """An image's reading as the response's fields (none for a text)."""
    if reading is None:
        return {}
    return {
        "theme": reading.theme,
        "title": reading.title,
        "text": reading.text,
        "text_blocks": [TextBlockOut(kind=kind, text=text) for kind, text in reading.text_blocks],
    }


class SeriesFetchOut(BaseModel):
    """What one timeseries provider returned for one of the text's key entities."""

    provider: str
    entity: str
    entity_type: str
    entity_id: int
    series: list[StoredSeriesOut] = Field(description="as stored, anchored to the entity and the text")
    error: str | None = Field(default=None, exclude_if=absent, description="why none was stored")

    @classmethod
    def from_domain(cls, fetched: FetchedBy) -> SeriesFetchOut:
        return cls(
            provider=fetched.provider,
            entity=fetched.entity.name,
            entity_type=fetched.entity.type,
            entity_id=fetched.entity.id,
            series=[StoredSeriesOut.from_domain(one) for one in fetched.series],
            error=fetched.error,
        )


class SeriesObservationOut(BaseModel):
    """An observation of a series this remember stored: its text, and the artifact it was
    remembered as (with what its extraction stated), or the error that stopped it."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    series_id: int
    key: str
    field: str = Field(description="what of the key the values measure")
    parent_artifact_id: int = Field(description="the remember's artifact")
    query: str | None = Field(
        default=None, exclude_if=absent, description="what was observed: the key and the span"
    )
    from_: str | None = Field(
        default=None, alias="from", exclude_if=absent, description="RFC 3339: its first point"
    )
    to: str | None = Field(
        default=None,
        exclude_if=absent,
        description="RFC 3339: its last point (the observation's reference time)",
    )
    text: str | None = Field(
        default=None, exclude_if=absent, description="the observation; omitted when the series had no point"
    )
    artifact_id: int | None = Field(
        default=None,
        exclude_if=absent,
        description="its artifact, of kind series_observation; omitted when none was stored",
    )
    entities: list[RememberedEntity] = Field(default_factory=list, description="what its extraction named")
    edges: list[RememberedEdge] = Field(default_factory=list, description="what its extraction stated")
    error: str | None = Field(
        default=None, exclude_if=absent, description="why it was not remembered (the text stands)"
    )

    @classmethod
    def from_domain(cls, parent: int, derived: DerivedText) -> SeriesObservationOut:
        series, done = derived.series, derived.remembered
        assert series is not None  # an observation's
        first, last = rfc3339(derived.first_at), rfc3339(derived.last_at)
        return cls(
            series_id=series.id,
            key=series.key,
            field=series.field,
            parent_artifact_id=parent,
            query=f"{series.key} from {day_or_instant(derived.first_at)} to {day_or_instant(derived.last_at)}"
            if first
            else None,
            from_=first,
            to=last,
            text=derived.text,
            artifact_id=done.artifact_id if done else None,
            entities=[_entity_out(e) for e in done.entities] if done else [],
            edges=[RememberedEdge.from_domain(edge) for edge in done.edges] if done else [],
            error=derived.error,
        )


def _entity_out(e: StoredEntity) -> RememberedEntity:
    return RememberedEntity(
        id=e.id,
        name=e.name,
        type=e.type,
        description=e.description,
        created=e.created,
        latitude=e.latitude,
        longitude=e.longitude,
        model_id=e.model_id,
    )


class WebSource(BaseModel):
    url: str
    title: str
    page_age: str | None = Field(default=None, exclude_if=absent, description="as the search gave it")


class WebSearchOut(BaseModel):
    """What the web search about one of the text's key entities found, and the artifact (of kind
    web_search) it was remembered as, with what its extraction stated; or why it stopped."""

    entity: str
    entity_type: str
    entity_id: int
    query: str = Field(description="what was searched for")
    parent_artifact_id: int = Field(description="the remember's artifact")
    artifact_id: int | None = Field(
        default=None, exclude_if=absent, description="omitted when nothing was found or it failed"
    )
    searches: list[str] = Field(description="the queries the model ran")
    sources: list[WebSource] = Field(description="the pages the findings rest on")
    entities: list[RememberedEntity] = Field(default_factory=list)
    edges: list[RememberedEdge] = Field(default_factory=list)
    cost_usd: float | None = Field(
        default=None, exclude_if=absent, description="the search call's, searches included"
    )
    error: str | None = Field(default=None, exclude_if=absent, description="why it stopped (the text stands)")

    @classmethod
    def from_domain(cls, parent: int, derived: DerivedText) -> WebSearchOut:
        entity, done = derived.entity, derived.remembered
        assert entity is not None and derived.query is not None  # a web search's
        return cls(
            entity=entity.name,
            entity_type=entity.type,
            entity_id=entity.id,
            query=derived.query,
            parent_artifact_id=parent,
            artifact_id=done.artifact_id if done else None,
            searches=list(derived.searches),
            sources=[WebSource(**source) for source in derived.sources],
            entities=[_entity_out(e) for e in done.entities] if done else [],
            edges=[RememberedEdge.from_domain(edge) for edge in done.edges] if done else [],
            cost_usd=derived.cost_usd,
            error=derived.error,
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
    embedded_entities: int = Field(
        description="the entities' strings this remember embedded (as the gligabao server counts)"
    )
    embedded_edges: int = Field(description="the facts' strings this remember embedded")
    remember_run_id: int = Field(
        description="the gligabao server's id of the run; here the artifact's id, whose run "
        "GET /v1/gb/artifacts/{id} reads back (status, chunks, entities, facts)"
    )
    chunk_count: int = Field(description="chunks of a long text; 0 when it was not chunked")
    chunks: list[RememberedChunk] = Field(
        description="a long text's chunks in order, each with the summary its extraction wrote; [] when it was not chunked"
    )
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
    theme: str | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's: what kind of image it is; omitted for a text",
        json_schema_extra={"enum": list(THEMES)},
    )
    title: str | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's own title as written in it ('' without one); omitted for a text",
    )
    text: str | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's legible text, its blocks one per line; omitted for a text",
    )
    text_blocks: list[TextBlockOut] | None = Field(
        default=None,
        exclude_if=absent,
        description="an image's legible text in reading order, by block; omitted for a text",
    )
    series: list[StoredSeriesOut] | None = Field(
        default=None,
        exclude_if=absent,
        description="the timeseries stored with the text (its timeseries.series), as stored; omitted without them",
    )
    series_fetches: list[SeriesFetchOut] | None = Field(
        default=None,
        exclude_if=absent,
        description="with timeseries.fetch: what each provider returned for each key entity; omitted otherwise",
    )
    web_searches: list[WebSearchOut] | None = Field(
        default=None,
        exclude_if=absent,
        description="with web_search: what was found about each key entity of the text; omitted otherwise",
    )
    series_observations: list[SeriesObservationOut] | None = Field(
        default=None,
        exclude_if=absent,
        description="with timeseries.observations: an observation of each series stored (at most 10); omitted otherwise",
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
            entities=[_entity_out(e) for e in remembered.entities],
            edges=[RememberedEdge.from_domain(edge) for edge in remembered.edges],
            superseded=[
                SupersededEdge(id=e.id, invalid_at=rfc3339(e.invalid_at), expired_at=rfc3339(e.expired_at))
                for e in remembered.superseded
            ],
            invalidated_edges=[e.id for e in remembered.superseded],
            embedded_entities=remembered.embedded_entities,
            embedded_edges=remembered.embedded_edges,
            remember_run_id=remembered.artifact_id,
            chunk_count=remembered.chunks,
            chunks=[RememberedChunk.from_domain(chunk) for chunk in remembered.pieces],
            description=remembered.description,
            repeated=remembered.repeated if remembered.description is not None else None,
            **_reading(remembered.reading),
            series=[StoredSeriesOut.from_domain(one) for one in remembered.series]
            if remembered.series
            else None,
            series_fetches=[SeriesFetchOut.from_domain(one) for one in remembered.fetches] or None,
            web_searches=[
                WebSearchOut.from_domain(remembered.artifact_id, one) for one in remembered.web_searches
            ]
            or None,
            series_observations=[
                SeriesObservationOut.from_domain(remembered.artifact_id, one)
                for one in remembered.observations
            ]
            or None,
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
