"""What a remember of a text adds after the text itself: an observation of each timeseries it
stored (`timeseries.observations`), and what a web search finds about its key entities
(`web_search`). Each is a text of its own, remembered like any text (an extraction call each,
its own artifact and transaction) once the text's remember has committed, so that a failure of
one of them leaves the text, its graph and its series stored: the response says which failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from gligabao.db.graph_writes import Derivation
from gligabao.errors import BadRequest, GbError
from gligabao.memory import series_providers
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.memory.remember import DerivedText, Remembered, TextToRemember, remember_text
from gligabao.memory.series_observation import ObservedSeries, Point, observation_text
from gligabao.memory.timeseries import SeriesInput, StoredSeries, merged_points
from gligabao.memory.web_search import WebSearchText, require_web_search, web_search_texts
from gligabao.observability.monitoring import current_report

# The series of one remember observed at most, the first in the request's order (as the gligabao
# server does): each costs an extraction call.
OBSERVATIONS_MAX = 10

T = TypeVar("T")


def remember_text_and_more(
    memory: Memory,
    request: TextToRemember,
    *,
    observe: bool = False,
    fetch_providers: Sequence[str] | None = None,
    fetch: bool = False,
    web_search: bool = False,
    request_id: str | None = None,
    deadline: float | None = None,
) -> Remembered:
    """Remember the text (with its series), then what it asks for beyond it. A fetch with no
    timeseries provider is a 503 before any model call."""
    if fetch:
        series_providers.providers_for(fetch_providers)
    if web_search:
        check_web_search(memory)
    remembered = remember_text(memory, request, request_id=request_id, deadline=deadline)
    if observe and remembered.series:
        observations = observe_series(memory, request, remembered, request_id=request_id, deadline=deadline)
        remembered = replace(remembered, observations=tuple(observations))
    if web_search:
        found = search_the_web(memory, request, remembered, request_id=request_id, deadline=deadline)
        remembered = replace(remembered, web_searches=tuple(found))
    return remembered


def check_web_search(memory: Memory) -> None:
    """A 400 when the deployment has not enabled web search (GB_WEB_SEARCH: the operator pays for
    the searches, as for the models it allows), a 503 when its LLM has no web search tool (no
    Anthropic key): before any model call."""
    settings = getattr(memory, "settings", None)
    if settings is None or not settings.web_search:
        raise BadRequest("web_search: not enabled on this deployment (GB_WEB_SEARCH)")
    require_web_search(memory)


def aside(run: Callable[[], T]) -> T:
    """`run()`, a remember beside the text's: the request's monitoring event stays the text's (its
    counts), the model calls `run` made added to its tokens and cost."""
    report = current_report()
    if report is None:
        return run()
    call, counts = report.call, report.counts
    try:
        return run()
    finally:
        if report.call is not call and report.call is not None:
            report.more_calls.append(report.call)
        report.call, report.counts = call, counts


def search_the_web(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
) -> list[DerivedText]:
    """One web search per key entity of the text, then each finding remembered as a text of kind
    web_search (as of now), its sources kept with it; a search that failed or found nothing is
    reported and the others stand."""
    found = aside(lambda: _searched(memory, request, remembered, request_id, deadline))
    return [_remember_finding(memory, request, remembered, one, request_id, deadline) for one in found]


def _searched(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    request_id: str | None,
    deadline: float | None,
) -> list[WebSearchText]:
    with operation(
        memory,
        "remember",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=request.session_id,
        request_id=request_id,
    ) as op:
        op.call.dataset_id = remembered.dataset_id  # its inferences are saved when it ends
        return web_search_texts(
            memory,
            op.call,
            remembered.entities,
            remembered.edges,
            model=request.models.get("web_search"),
            deadline=deadline,
        )


def _remember_finding(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    found: WebSearchText,
    request_id: str | None,
    deadline: float | None,
) -> DerivedText:
    about = {
        "entity": found.entity,
        "query": found.query,
        "searches": found.searches,
        "sources": found.sources,
        "cost_usd": found.cost_usd,
    }
    if found.text is None:
        return DerivedText("web_search", None, error=found.error, **about)
    finding = TextToRemember(
        user_id=request.user_id,
        dataset=request.dataset,
        text=found.text,
        session_id=request.session_id,
        reference_time=memory.clock(),
        reasoning=request.reasoning,
        models=request.models,
        metadata=request.metadata,
        artifact_kind="web_search",
        derivation=Derivation(derived_from=remembered.artifact_id, sources=found.sources),
    )
    try:
        done = aside(lambda: remember_text(memory, finding, request_id=request_id, deadline=deadline))
    except GbError as error:
        return DerivedText("web_search", found.text, error=error.message, **about)
    return DerivedText("web_search", found.text, done, **about)


def observe_series(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
) -> list[DerivedText]:
    """One observation per series the remember stored (at most OBSERVATIONS_MAX), written from
    the points this request brought, as of its last point."""
    given = {series.key: series for series in request.series}
    return [
        _observe(memory, request, remembered, stored, given[stored.key], request_id, deadline)
        for stored in remembered.series[:OBSERVATIONS_MAX]
        if stored.key in given
    ]


def _observe(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    stored: StoredSeries,
    given: SeriesInput,
    request_id: str | None,
    deadline: float | None,
) -> DerivedText:
    points = [Point(point.at, float(point.value)) for point in merged_points(given.points)]
    about = [anchor.label for anchor in stored.anchors if anchor.type == "entity" and anchor.label]
    text = observation_text(ObservedSeries(stored.key, stored.name, stored.unit, about, points))
    if text is None:
        return DerivedText("series_observation", None, series=stored)
    first_at, last_at = min(point.at for point in points), max(point.at for point in points)
    observation = TextToRemember(
        user_id=request.user_id,
        dataset=request.dataset,
        text=text,
        session_id=request.session_id,
        reference_time=last_at,
        reasoning=request.reasoning,
        models=request.models,
        memory_kind=request.memory_kind,
        metadata=request.metadata,
        artifact_kind="series_observation",
        derivation=Derivation(derived_from=remembered.artifact_id, series_id=stored.id),
    )
    try:
        done = aside(lambda: remember_text(memory, observation, request_id=request_id, deadline=deadline))
    except GbError as error:  # the text and its series stand; the response says what failed
        return DerivedText(
            "series_observation", text, error=error.message, series=stored, first_at=first_at, last_at=last_at
        )
    return DerivedText("series_observation", text, done, series=stored, first_at=first_at, last_at=last_at)
