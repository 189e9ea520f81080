"""Facts as a resource: GET /v1/gb/edges/{id} (one fact and where it comes from) and
GET /v1/gb/edges (a dataset's facts, filtered as a search is, in pages behind an opaque cursor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gligabao.db import edge_reads
from gligabao.db.readback import records_of
from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.errors import NotFound
from gligabao.memory.cursors import decode_cursor, encode_cursor, row_id
from gligabao.memory.ports import Memory
from gligabao.memory.readback import page_size
from gligabao.model import RecordedEdge


@dataclass(frozen=True)
class ProvenanceArtifact:
    id: int
    kind: str
    session_id: str | None
    parent_id: int | None
    reference_time: datetime | None
    created_at: datetime
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LinkedEdge:
    """An edge next to another in a supersession: what superseded it, or what it superseded."""

    id: int
    relation: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None


@dataclass(frozen=True)
class EdgeStatement:
    """What one text (or a correction, a restore) said of the fact, and how far that holds now."""

    id: int
    artifact_id: int | None
    kind: str  # 'said', or 'correction': a correction replaced the fact over that period
    valid_at: datetime | None
    invalid_at: datetime | None
    said_at: datetime
    ends_at: datetime | None  # how far it holds (None: open, or nowhere when its start is unknown)
    cut: bool  # a contradicting fact's start ended it
    cut_by: int | None  # that fact's edge (None once forgotten)


@dataclass(frozen=True)
class EdgeDetails:
    dataset: str
    edge: RecordedEdge
    artifacts: list[ProvenanceArtifact]
    sessions: list[str]
    superseded_by: LinkedEdge | None
    supersedes: list[LinkedEdge]
    statements: list[EdgeStatement] = field(default_factory=list)


@dataclass(frozen=True)
class EdgePage:
    dataset: str
    edges: list[RecordedEdge]
    next_cursor: str | None


def read_edge(memory: Memory, user_id: str, edge_id: int) -> EdgeDetails:
    """The user's edge with its provenance; NotFound (404) for an id in none of the user's datasets."""
    with memory.database.transaction(user_id) as uow:
        row = edge_reads.edge_with_provenance(uow.conn, user_id=user_id, edge_id=edge_id)
    if row is None:
        raise NotFound(f"edge {edge_id} not found")
    artifacts, sessions = row.pop("artifacts"), row.pop("sessions")
    superseded_by, supersedes, statements, dataset = (
        row.pop("superseded_by_edge"),
        row.pop("supersedes"),
        row.pop("statements"),
        row.pop("dataset"),
    )
    row.pop("dataset_id")
    return EdgeDetails(
        dataset=dataset,
        edge=records_of(RecordedEdge, [row])[0],
        artifacts=records_of(ProvenanceArtifact, artifacts),
        sessions=list(sessions),
        superseded_by=records_of(LinkedEdge, [superseded_by])[0] if superseded_by else None,
        supersedes=records_of(LinkedEdge, supersedes),
        statements=records_of(EdgeStatement, statements),
    )


def list_edges(
    memory: Memory,
    user_id: str,
    dataset: str,
    filters: RetrievalFilters,
    *,
    limit: int | None = None,
    cursor: str | None = None,
) -> EdgePage:
    """A page of the dataset's facts by id; NotFound for a dataset the user does not have."""
    take = page_size(memory.limits, limit)
    after = decode_cursor(cursor, "edges", after=row_id)["after"] if cursor else 0
    with memory.database.transaction(user_id) as uow:
        rows = edge_reads.edge_page(
            uow.conn, user_id=user_id, dataset=dataset, after_id=after, take=take, filters=filters
        )
    if rows is None:
        raise NotFound(f"dataset {dataset!r} not found")
    edges = records_of(RecordedEdge, rows[:take])
    more = len(rows) > take
    return EdgePage(dataset, edges, encode_cursor("edges", after=edges[-1].id) if more else None)
