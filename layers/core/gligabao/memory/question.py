"""The question of a query (memory/query.py), shared with the retrieval-only path
(memory/retrieval_only.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.limits import Limits


@dataclass(frozen=True)
class Question:
    """A validated query request."""

    user_id: str
    query: str
    dataset: str = "main"
    session_id: str | None = None
    reasoning: dict[str, str] = field(default_factory=dict)  # stage -> level
    models: dict[str, str] = field(default_factory=dict)  # stage -> model
    request_id: str | None = None
    deadline: float | None = None  # time.monotonic() instant the provider calls must end before
    as_of: datetime | None = None  # answer from the facts valid then, superseded ones included
    nearby_radius_km: float | None = None  # geo on: search the entities this near the question's places
    eval: bool = False  # record the call's trajectory (SPEC section 10)
    answer: bool = True  # False: the retrieved context only, no LLM call (memory/retrieval_only.py)
    with_series: bool = True  # the timeseries of the context's entities and facts (a search has none)
    filters: RetrievalFilters | None = None  # only what they let through (db/retrieval_filters.py)
    limits: Limits | None = None  # the retrieval's, for this question (a search's); default the container's
