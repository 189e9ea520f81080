"""The HTTP contract of GET /v1/gb/graph: its query parameters and a page of the export, as JSON
(`GraphExport`) or as GraphML (`graphml`)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Annotated
from xml.sax.saxutils import escape, quoteattr

from pydantic import BaseModel, BeforeValidator, Field

from gligabao.api.models import MODEL_ID_DESCRIPTION, EdgeOut, absent
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory.graph_export import GraphEntity, GraphPage, GraphSeries

FORMATS = ("json", "graphml")
GRAPHML_MEDIA_TYPE = "application/graphml+xml"
NEXT_CURSOR_HEADER = "X-Next-Cursor"


def _true_or_false(value: object) -> object:
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError("include_expired must be true or false")


def _format(value: object) -> object:
    if isinstance(value, str) and value.lower() in FORMATS:
        return value.lower()
    raise ValueError(f"format must be {' or '.join(FORMATS)}")


def _whole_number(value: object) -> object:
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,9}", value.strip()):
        return int(value)
    raise ValueError("limit must be a whole number of rows")


def _cursor(value: object) -> object:
    if isinstance(value, str) and value:
        return value
    raise ValueError("cursor must be the next_cursor of the previous page")


IncludeExpired = Annotated[bool, BeforeValidator(_true_or_false)]
Format = Annotated[str, BeforeValidator(_format)]
Limit = Annotated[int | None, BeforeValidator(_whole_number)]
Cursor = Annotated[str | None, BeforeValidator(_cursor)]


# --- JSON ----------------------------------------------------------------------------------------


class GraphEntityOut(BaseModel):
    id: int = Field(description="gb_entities row id")
    name: str
    type: str
    description: str | None = Field(default=None, exclude_if=absent, description="omitted when empty")
    latitude: float | None = Field(default=None, exclude_if=absent, description="geo entities only")
    longitude: float | None = Field(default=None, exclude_if=absent, description="geo entities only")
    created_at: str = Field(description="RFC 3339: when the graph learned it")
    updated_at: str = Field(description="RFC 3339: when it last changed")
    model_id: str | None = Field(default=None, exclude_if=absent, description=MODEL_ID_DESCRIPTION)

    @classmethod
    def from_domain(cls, entity: GraphEntity) -> GraphEntityOut:
        return cls(
            id=entity.id,
            name=entity.name,
            type=entity.type,
            description=entity.description or None,
            latitude=entity.latitude,
            longitude=entity.longitude,
            created_at=rfc3339(entity.created_at),
            updated_at=rfc3339(entity.updated_at),
            model_id=entity.model_id,
        )


class GraphEdgeOut(EdgeOut):
    """An edge of the export: live, or superseded with `include_expired=true`."""


class GraphAnchorOut(BaseModel):
    type: str = Field(description="entity, edge or artifact")
    id: int = Field(description="the entity's, edge's or artifact's id")
    role: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    window_start: str | None = Field(default=None, exclude_if=absent, description="RFC 3339")
    window_end: str | None = Field(default=None, exclude_if=absent, description="RFC 3339")


class GraphSeriesOut(BaseModel):
    """A timeseries of the export: its points and what it is anchored to."""

    id: int = Field(description="gb_series row id")
    key: str
    field: str
    name: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    unit: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    frequency: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    source: str = Field(description="supplied or fetched")
    provider: str | None = Field(default=None, exclude_if=absent, description="a fetched series' provider")
    created_at: str
    updated_at: str
    anchors: list[GraphAnchorOut]
    points: list[tuple[str, float]] = Field(description="[time, value] pairs, earliest first")

    @classmethod
    def from_domain(cls, series: GraphSeries) -> GraphSeriesOut:
        return cls(
            id=series.id,
            key=series.key,
            field=series.field,
            name=series.name or None,
            unit=series.unit or None,
            frequency=series.frequency or None,
            source=series.source,
            provider=series.provider or None,
            created_at=rfc3339(series.created_at),
            updated_at=rfc3339(series.updated_at),
            anchors=[
                GraphAnchorOut(
                    type=anchor["type"],
                    id=anchor["id"],
                    role=anchor.get("role") or None,
                    window_start=_time_text(anchor.get("window_start")),
                    window_end=_time_text(anchor.get("window_end")),
                )
                for anchor in series.anchors
            ],
            points=[(rfc3339(at), value) for at, value in series.points],
        )


def _time_text(value: str | None) -> str | None:
    """A time as jsonb wrote it (ISO 8601 with its offset), as the API writes times."""
    return rfc3339(datetime.fromisoformat(value)) if value else None


class GraphExport(BaseModel):
    """A page of the export: entities first (by name), then edges (in the order they were learned),
    then timeseries (by id)."""

    entities: list[GraphEntityOut]
    edges: list[GraphEdgeOut]
    series: list[GraphSeriesOut] = Field(
        default_factory=list, description="the dataset's timeseries, each with all its points and anchors"
    )
    next_cursor: str | None = Field(
        description="pass it as `cursor` for the next page; null on the last page"
    )

    @classmethod
    def from_domain(cls, page: GraphPage) -> GraphExport:
        return cls(
            entities=[GraphEntityOut.from_domain(entity) for entity in page.entities],
            edges=[GraphEdgeOut.from_domain(edge) for edge in page.edges],
            series=[GraphSeriesOut.from_domain(series) for series in page.series],
            next_cursor=page.next_cursor,
        )


def json_body(page: GraphPage) -> str:
    return GraphExport.from_domain(page).model_dump_json()


# --- GraphML -------------------------------------------------------------------------------------

# (key id, for, attr.name, attr.type): the same attribute names as the JSON export.
GRAPHML_KEYS = (
    ("next_cursor", "graph", "next_cursor", "string"),
    ("n_name", "node", "name", "string"),
    ("n_type", "node", "type", "string"),
    ("n_description", "node", "description", "string"),
    ("n_latitude", "node", "latitude", "double"),
    ("n_longitude", "node", "longitude", "double"),
    ("n_created_at", "node", "created_at", "string"),
    ("n_updated_at", "node", "updated_at", "string"),
    ("n_model_id", "node", "model_id", "string"),
    ("e_relation", "edge", "relation", "string"),
    ("e_description", "edge", "description", "string"),
    ("e_artifact_id", "edge", "artifact_id", "long"),
    ("e_valid_at", "edge", "valid_at", "string"),
    ("e_invalid_at", "edge", "invalid_at", "string"),
    ("e_created_at", "edge", "created_at", "string"),
    ("e_expired_at", "edge", "expired_at", "string"),
    ("e_model_id", "edge", "model_id", "string"),
    ("s_key", "node", "key", "string"),
    ("s_field", "node", "field", "string"),
    ("s_name", "node", "series_name", "string"),
    ("s_unit", "node", "unit", "string"),
    ("s_frequency", "node", "frequency", "string"),
    ("s_source", "node", "source", "string"),
    ("s_provider", "node", "provider", "string"),
    ("s_created_at", "node", "series_created_at", "string"),
    ("s_updated_at", "node", "series_updated_at", "string"),
    ("s_anchors", "node", "anchors", "string"),
    ("s_points", "node", "points", "string"),
)
_HEADER = "\n".join(
    [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
        ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">',
        *(
            f'  <key id="{key}" for="{kind}" attr.name="{name}" attr.type="{type_}"/>'
            for key, kind, name, type_ in GRAPHML_KEYS
        ),
    ]
)
# Characters XML 1.0 cannot hold (control characters but tab, line feed and carriage return).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def graphml(page: GraphPage) -> str:
    """A page as one GraphML document: its entities as `<node id="n<id>">`, its edges as
    `<edge id="e<id>" source="n<id>" target="n<id>">`, its timeseries as `<node id="s<id>">` (their
    anchors and points as JSON text). An edge's ends may be nodes of another page: the export is
    the union of its pages' nodes and edges."""
    lines = [_HEADER, f'  <graph id={_attribute(page.dataset)} edgedefault="directed">']
    if page.next_cursor:
        lines.append(f'    <data key="next_cursor">{_text(page.next_cursor)}</data>')
    for entity in page.entities:
        lines.append(f'    <node id="n{entity.id}">')
        lines += _data(GraphEntityOut.from_domain(entity).model_dump(exclude={"id"}), "n_")
        lines.append("    </node>")
    for edge in page.edges:
        lines.append(f'    <edge id="e{edge.id}" source="n{edge.source_id}" target="n{edge.target_id}">')
        fields = GraphEdgeOut.from_domain(edge).model_dump(
            exclude={"id", "source_id", "target_id", "source", "target"}
        )
        lines += _data(fields, "e_")
        lines.append("    </edge>")
    for series in page.series:
        lines.append(f'    <node id="s{series.id}">')
        fields = GraphSeriesOut.from_domain(series).model_dump(exclude={"id"})
        fields["anchors"] = json.dumps(fields["anchors"], separators=(",", ":"))
        fields["points"] = json.dumps(fields["points"], separators=(",", ":"))
        lines += _data(fields, "s_")
        lines.append("    </node>")
    lines += ["  </graph>", "</graphml>", ""]
    return "\n".join(lines)


def _data(fields: dict, prefix: str) -> list[str]:
    return [f'      <data key="{prefix}{name}">{_text(value)}</data>' for name, value in fields.items()]


def _text(value: object) -> str:
    return escape(_NOT_XML.sub("\ufffd", str(value)))


def _attribute(value: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", value))


def response_bytes(body: str) -> int:
    """The size of `body` inside a Lambda response (a JSON string: quotes and non-ASCII escaped)."""
    return len(json.dumps(body))
