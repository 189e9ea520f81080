"""The HTTP contract of POST /v1/gb/query: the request body and the response (seeds/query.md)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    WithJsonSchema,
    model_validator,
)

from gligabao.ai.stages import QUERY_STAGES, parse_models, parse_reasoning
from gligabao.api.filter_models import SearchFilters
from gligabao.api.models import MODEL_ID_DESCRIPTION, EdgeOut, absent
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
    DatasetField,
    Documented,
    SessionId,
    UserId,
    model_policy,
    models_schema,
    reasoning_schema,
    rfc3339_time,
    server_bundle,
    time_schema,
)
from gligabao.errors import BadRequest
from gligabao.limits import DEFAULT_LIMITS
from gligabao.model import Nearby, Passage, StoredEntity

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.query import Answer, Question

GEO_RADIUS_MAX_KM = DEFAULT_LIMITS.geo_radius_max_km


def query_text(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if not value.strip():
        raise ValueError("query must not be empty")
    return value.strip()


# A question or a search's text: a string, not blank, stripped (query and search).
QueryText = Annotated[
    str,
    BeforeValidator(query_text),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN}),
]


def _reasoning(value: object) -> object:
    try:
        reasoning = parse_reasoning(value, QUERY_STAGES, "query")
        model_policy().check_reasoning(reasoning)
        return reasoning or None
    except BadRequest as error:
        raise ValueError(error.message) from None


def _models(value: object) -> object:
    try:
        models = parse_models(value, QUERY_STAGES)
        model_policy().check_models(models)
        return models or None
    except BadRequest as error:
        raise ValueError(error.message) from None


def _strict_bool(value: object) -> object:
    if value is not None and not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _as_of(value: object) -> datetime | None:
    """RFC 3339 with an offset, as `reference_time` of remember; a time that does not exist is a
    400 too."""
    return rfc3339_time(value, "as_of")


AsOf = Annotated[
    datetime | None,
    BeforeValidator(_as_of),
    WithJsonSchema(
        time_schema(
            "RFC 3339 with an offset, within the years 1 to 9999 in UTC: answer from the facts valid at "
            "that time, superseded ones included; default: the live facts"
        )
    ),
]


def _radius(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number of kilometers")
    if not 0 < value <= GEO_RADIUS_MAX_KM:
        raise ValueError(f"geo_radius_km must be greater than 0 and at most {GEO_RADIUS_MAX_KM:g}")
    return float(value)


def _geo_nearby_schema() -> dict:
    if not server_bundle().settings.geo:
        return {
            "anyOf": [{"const": False}, {"type": "null"}],
            "description": "geo is off on this server: 400 if true",
        }
    return {
        "anyOf": [{"type": "boolean"}, {"type": "null"}],
        "description": "search the geo entities near the places of the question",
    }


def _geo_radius_schema() -> dict:
    if not server_bundle().settings.geo:
        return {"type": "null", "description": "geo is off on this server: 400 if given"}
    return {
        "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": GEO_RADIUS_MAX_KM}, {"type": "null"}],
        "description": f"radius of the nearby search in kilometers, in (0, {GEO_RADIUS_MAX_KM:g}]; giving it "
        "turns the search on (400 with geo_nearby false)",
    }


class QueryRequest(BaseModel):
    """`{"user_id": "u1", "query": "Where does Alice work?", "session_id": "chat-42"}`

    Unknown fields are refused (400 naming them), so a misspelt `sesion_id` is never silently dropped.
    """

    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    query: QueryText = Field(description="the question; not blank")
    dataset: DatasetField
    session_id: SessionId = None
    reasoning: Annotated[
        str | dict[str, str] | None,
        BeforeValidator(_reasoning),
        Documented(lambda: reasoning_schema(QUERY_STAGES, "query")),
    ] = None
    models: Annotated[
        dict[str, str] | None, BeforeValidator(_models), Documented(lambda: models_schema(QUERY_STAGES))
    ] = None
    geo_nearby: Annotated[
        bool | None, BeforeValidator(_strict_bool), Documented(lambda: _geo_nearby_schema())
    ] = None
    geo_radius_km: Annotated[
        float | None, BeforeValidator(_radius), Documented(lambda: _geo_radius_schema())
    ] = None
    as_of: AsOf = None
    eval: StrictBool = Field(default=False, description=EVAL_DESCRIPTION)
    filters: SearchFilters | None = Field(
        default=None,
        description="the filters of POST /v1/gb/search (entity types, relations, sessions, artifact metadata, "
        "valid and created windows, include_expired): the answer is written only from what they let through",
    )
    answer: Annotated[bool | None, BeforeValidator(_strict_bool)] = Field(
        default=None,
        description="false: no answer and no LLM call, only the retrieved context the answer would be "
        "written from (its entities, edges and passages, and its rendered text); default true",
    )

    @model_validator(mode="after")
    def _radius_needs_nearby(self) -> QueryRequest:
        if self.geo_radius_km is not None and self.geo_nearby is False:
            raise ValueError(
                "geo_radius_km turns the nearby search on: it cannot be given with geo_nearby false"
            )
        if self.answer is False and self.wants_geo:
            raise ValueError(
                "answer false makes no LLM call: geo_nearby and geo_radius_km need one (detect_geo)"
            )
        if self.answer is False and self.eval:
            raise ValueError("eval records the trajectory of an answer: it cannot be given with answer false")
        return self

    @property
    def wants_geo(self) -> bool:
        return bool(self.geo_nearby) or self.geo_radius_km is not None

    @property
    def stage_reasoning(self) -> dict[str, str]:
        return self.reasoning if isinstance(self.reasoning, dict) else {}

    @property
    def stage_models(self) -> dict[str, str]:
        return self.models or {}

    def question(
        self, request_id: str | None = None, deadline: float | None = None, *, default_radius_km: float = 50.0
    ) -> Question:
        """The validated question; a nearby search (`geo_nearby` or `geo_radius_km`) has the
        request's radius, else the server's (GB_GEO_RADIUS_KM)."""
        # imported here, not with the module: the client reads responses with these models without the memory core
        from gligabao.memory.question import Question

        radius = (self.geo_radius_km or default_radius_km) if self.wants_geo else None
        return Question(
            user_id=self.user_id,
            query=self.query,
            dataset=self.dataset,
            session_id=self.session_id,
            reasoning=self.stage_reasoning,
            models=self.stage_models,
            request_id=request_id,
            deadline=deadline,
            as_of=self.as_of,
            nearby_radius_km=radius,
            eval=self.eval,
            answer=self.answer is not False,
            filters=self.filters.domain() if self.filters is not None else None,
        )


# --- response ----------------------------------------------------------------------------------


class EntityEvidence(BaseModel):
    id: int = Field(description="gb_entities row id")
    name: str
    type: str
    description: str | None = Field(default=None, exclude_if=absent, description="omitted when empty")
    model_id: str | None = Field(default=None, exclude_if=absent, description=MODEL_ID_DESCRIPTION)

    @classmethod
    def from_domain(cls, entity: StoredEntity) -> EntityEvidence:
        return cls(
            id=entity.id,
            name=entity.name,
            type=entity.type,
            description=entity.description or None,
            model_id=entity.model_id,
        )


class EdgeEvidence(EdgeOut):
    """A cited fact; `expired_at` only when a query with `as_of` cites a superseded one."""


class PassageEvidence(BaseModel):
    artifact_id: int = Field(description="the chunk's gb_artifacts row")
    parent_id: int = Field(description="the whole text the chunk is part of")
    index: int = Field(description="position of the chunk in the text, from 0")
    summary: str | None = Field(
        default=None, exclude_if=absent, description="omitted if the search did not find it"
    )
    text: str | None = Field(
        default=None, exclude_if=absent, description="omitted for the passages given with their summary only"
    )

    @classmethod
    def from_domain(cls, passage: Passage) -> PassageEvidence:
        return cls(
            artifact_id=passage.artifact_id,
            parent_id=passage.parent_id,
            index=passage.index,
            summary=passage.summary,
            text=passage.text,
        )


class Evidence(BaseModel):
    entities: list[EntityEvidence]
    edges: list[EdgeEvidence]
    passages: list[PassageEvidence]


class GeoAnchorOut(BaseModel):
    id: int = Field(description="gb_entities row id of the place")
    name: str
    latitude: float
    longitude: float


class NearbyEntityOut(BaseModel):
    id: int = Field(description="gb_entities row id")
    name: str
    type: str
    latitude: float
    longitude: float
    distance_km: float = Field(description="great-circle distance to the nearest anchor (haversine), in km")
    anchor: str = Field(description="the name of that anchor")
    anchor_id: int


class NearbyOut(BaseModel):
    radius_km: float
    anchors: list[GeoAnchorOut] = Field(
        description="the places searched around: the question's, then matched ones"
    )
    nearby: list[NearbyEntityOut] = Field(description="the entities within the radius, nearest first")

    @classmethod
    def from_domain(cls, nearby: Nearby) -> NearbyOut:
        return cls(
            radius_km=nearby.radius_km,
            anchors=[
                GeoAnchorOut(id=a.id, name=a.name, latitude=a.latitude, longitude=a.longitude)
                for a in nearby.anchors
            ],
            nearby=[
                NearbyEntityOut(
                    id=n.entity.id,
                    name=n.entity.name,
                    type=n.entity.type,
                    latitude=n.latitude,
                    longitude=n.longitude,
                    distance_km=round(n.distance_km, DISTANCE_DECIMALS),
                    anchor=n.anchor.name,
                    anchor_id=n.anchor.id,
                )
                for n in nearby.entities
            ],
        )


DISTANCE_DECIMALS = 3  # metres


class QueryResponse(BaseModel):
    session_id: str | None = Field(
        default=None, exclude_if=absent, description="the request's session; omitted if it had none"
    )
    answer: str
    evidence: Evidence
    nearby: NearbyOut | None = Field(
        default=None,
        exclude_if=absent,
        description="geo on and geo_nearby or geo_radius_km: the nearby search; omitted when the question has no place",
    )
    trajectory: Trajectory | None = Field(default=None, exclude_if=absent, description=TRAJECTORY_DESCRIPTION)

    @classmethod
    def from_domain(cls, answer: Answer) -> QueryResponse:
        evidence = answer.evidence
        return cls(
            session_id=answer.session_id,
            answer=answer.answer,
            evidence=Evidence(
                entities=[EntityEvidence.from_domain(entity) for entity in evidence.entities],
                edges=[EdgeEvidence.from_domain(edge) for edge in evidence.edges],
                passages=[PassageEvidence.from_domain(passage) for passage in evidence.passages],
            ),
            nearby=NearbyOut.from_domain(answer.nearby) if answer.nearby is not None else None,
            trajectory=trajectory_out(answer.trajectory),
        )


class EvalQueryResponse(QueryResponse):
    """POST /v1/gb/eval/query: the query response, its trajectory's id beside it."""

    trajectory_id: int = Field(description=TRAJECTORY_ID_DESCRIPTION)
    trajectory: Trajectory = Field(description="the call's ATIF v1.8 trajectory, as stored")

    @classmethod
    def from_answer(cls, answer: Answer) -> EvalQueryResponse:
        response = QueryResponse.from_domain(answer)
        fields = {name: getattr(response, name) for name in QueryResponse.model_fields}
        return cls(**fields, trajectory_id=stored_trajectory_id(answer.trajectory))
