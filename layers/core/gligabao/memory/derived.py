"""What a remember of a text adds after the text itself: an observation of each timeseries it
stored (`timeseries.observations`), and what a web search finds about its key entities
(`web_search`). Each is a text of its own, remembered like any text (an extraction call each,
its own artifact and transaction) once the text's remember has committed, so that a failure of
one of them leaves the text, its graph and its series stored: the response says which failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TypeVar

from gligabao.ai.prompts.resolve_series import (
    RESOLVE_SERIES_MAX_TOKENS,
    SeriesAssignments,
    resolve_series_content,
)
from gligabao.ai.prompts.resolve_series import SYSTEM as RESOLVE_SERIES_SYSTEM
from gligabao.ai.stages import WEB_SEARCH_STAGE, level_for
from gligabao.db.graph_writes import Derivation
from gligabao.errors import BadRequest, GbError
from gligabao.limits import Limits
from gligabao.memory import series_providers, timeseries
from gligabao.memory.operation import Operation, operation
from gligabao.memory.ports import Memory
from gligabao.memory.remember import DerivedText, FetchedBy, Remembered, TextToRemember, remember_text
from gligabao.memory.series_observation import ObservedSeries, observation_text
from gligabao.memory.timeseries import Anchor, SeriesInput, StoredSeries, merged_points
from gligabao.memory.web_search import WebSearchText, key_entities, require_web_search, web_search_texts
from gligabao.model import StoredEntity
from gligabao.observability.monitoring import current_report

# The series of one remember observed at most, the first in the request's order (as the gligabao
# server does): each costs an extraction call.
OBSERVATIONS_MAX = 10
# The key entities a fetch asks each provider about (as web search chooses them).
FETCH_ENTITIES = 5

T = TypeVar("T")


def remember_text_and_more(
    memory: Memory,
    request: TextToRemember,
    *,
    observe: bool = False,
    fetch_providers: Sequence[str] | None = None,
    fetch: bool = False,
    fetch_before: timedelta = timedelta(days=30),
    fetch_after: timedelta = timedelta(0),
    web_search: bool = False,
    request_id: str | None = None,
    deadline: float | None = None,
) -> Remembered:
    """Remember the text (with its series), then what it asks for beyond it. A fetch with no
    timeseries provider is a 503 before any model call."""
    providers = series_providers.providers_for(fetch_providers) if fetch else []
    if web_search:
        check_web_search(memory)
    remembered = remember_text(memory, request, request_id=request_id, deadline=deadline)
    if providers:
        fetched = fetch_series(
            memory,
            request,
            remembered,
            providers,
            fetch_before,
            fetch_after,
            request_id=request_id,
            deadline=deadline,
        )
        got = tuple(series for by in fetched for series in by.series)
        remembered = replace(remembered, fetches=tuple(fetched), series=(*remembered.series, *got))
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


@contextmanager
def model_calls(
    memory: Memory, request: TextToRemember, remembered: Remembered, request_id: str | None
) -> Iterator[Operation]:
    """An operation for model calls made beside the text's remember (a web search, the fetch's
    assignment): their inferences are the text's dataset's, saved when it ends."""
    with operation(
        memory,
        "remember",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=request.session_id,
        request_id=request_id,
    ) as op:
        op.call.dataset_id = remembered.dataset_id
        yield op


def derived_text(
    request: TextToRemember, text: str, reference_time: datetime, kind: str, derivation: Derivation
) -> TextToRemember:
    """A text the remember derived, remembered as the request's own: its user, dataset, session,
    models, reasoning, memory kind and labels; an artifact of `kind`, with what it was made from."""
    return TextToRemember(
        user_id=request.user_id,
        dataset=request.dataset,
        text=text,
        session_id=request.session_id,
        reference_time=reference_time,
        reasoning=request.reasoning,
        models=request.models,
        memory_kind=request.memory_kind,
        metadata=request.metadata,
        artifact_kind=kind,
        derivation=derivation,
    )


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
    with model_calls(memory, request, remembered, request_id) as op:
        return web_search_texts(
            memory,
            op.call,
            remembered.entities,
            remembered.edges,
            model=request.models.get(WEB_SEARCH_STAGE),
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
    finding = replace(
        derived_text(
            request,
            found.text,
            memory.clock(),
            "web_search",
            Derivation(derived_from=remembered.artifact_id, sources=found.sources),
        ),
        extract_from=found.briefing,
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
    given = {(series.provider, series.key, series.field): series for series in request.series}
    given.update({(s.provider, s.key, s.field): s for by in remembered.fetches for s in by.asked})
    return [
        _observe(memory, request, remembered, stored, given[key], request_id, deadline)
        for stored in remembered.series[:OBSERVATIONS_MAX]
        if (key := (stored.provider, stored.key, stored.field)) in given
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
    points = merged_points(given.points)
    about = [anchor.label for anchor in stored.anchors if anchor.type == "entity" and anchor.label]
    text = observation_text(ObservedSeries(stored.key, stored.name, stored.unit, about, points))
    if text is None:
        return DerivedText("series_observation", None, series=stored)
    first_at, last_at = min(point.at for point in points), max(point.at for point in points)
    observation = derived_text(
        request,
        text,
        last_at,
        "series_observation",
        Derivation(derived_from=remembered.artifact_id, series_id=stored.id),
    )
    try:
        done = aside(lambda: remember_text(memory, observation, request_id=request_id, deadline=deadline))
    except GbError as error:  # the text and its series stand; the response says what failed
        return DerivedText(
            "series_observation", text, error=error.message, series=stored, first_at=first_at, last_at=last_at
        )
    return DerivedText("series_observation", text, done, series=stored, first_at=first_at, last_at=last_at)


def fetch_series(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    providers: Sequence[series_providers.SeriesProvider],
    before: timedelta,
    after: timedelta,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
) -> list[FetchedBy]:
    """The series the providers hold about the text's key entities (the most facts, at most
    FETCH_ENTITIES, concepts left out), over the window around its reference time: one model call
    (stage resolve_series) assigns each entity the providers whose description covers it and the
    identifier each needs; each assignment is one fetch, its points clipped to the window; what
    they return is stored in one transaction, anchored to the entity and to the text's artifact.
    A provider that fails or returns nothing is reported; the text stands."""
    start, end = remembered.valid_at - before, remembered.valid_at + after
    entities = key_entities(remembered.entities, remembered.edges, FETCH_ENTITIES)
    if not entities:
        return []
    assignments = aside(
        lambda: _assigned(memory, request, remembered, providers, entities, request_id, deadline)
    )
    asked: list[tuple[str, StoredEntity, list[SeriesInput], str | None]] = []
    seen: set[tuple[str, str, str]] = set()  # a series once, the first entity that brought it
    room = memory.limits.max_series_per_request
    for provider, entity, query in assignments:
        found, error = _fetched(provider, entity, query, start, end, remembered.artifact_id, memory.limits)
        kept = []
        for series in found:
            identity = (series.provider, series.key, series.field)
            if identity not in seen and len(seen) < room:
                seen.add(identity)
                kept.append(series)
        asked.append((provider.name, entity, kept, error))
    wanted = [series for _, _, found, _ in asked for series in found]
    stored_by_key: dict[tuple[str, str, str], StoredSeries] = {}
    if wanted:
        with memory.database.transaction(request.user_id, request.dataset, lock_dataset=True) as uow:
            stored = timeseries.store_series(
                uow, uow.dataset_id, wanted, remembered.artifact_id, limits=memory.limits
            )
        stored_by_key = {(one.provider, one.key, one.field): one for one in stored}
    return [
        FetchedBy(
            name,
            entity,
            tuple(stored_by_key[(s.provider, s.key, s.field)] for s in found),
            error,
            asked=tuple(found),
        )
        for name, entity, found, error in asked
    ]


def _assigned(
    memory: Memory,
    request: TextToRemember,
    remembered: Remembered,
    providers: Sequence[series_providers.SeriesProvider],
    entities: Sequence[StoredEntity],
    request_id: str | None,
    deadline: float | None,
) -> list[tuple[series_providers.SeriesProvider, StoredEntity, str]]:
    """The resolve_series call's assignments that name a listed entity and a listed provider, each
    pair once; its inference saved with the operation that ends here."""
    by_name = {provider.name: provider for provider in providers}
    with model_calls(memory, request, remembered, request_id) as op:
        reply = memory.llm.complete(
            op.call,
            "resolve_series",
            system=RESOLVE_SERIES_SYSTEM,
            content=resolve_series_content(
                [(p.name, p.description, p.query_format) for p in providers],
                [(e.name, e.type, e.description) for e in entities],
                remembered.valid_at,
            ),
            reply_model=SeriesAssignments,
            reasoning=level_for(dict(request.reasoning), "resolve_series"),
            model=request.models.get("resolve_series"),
            max_tokens=RESOLVE_SERIES_MAX_TOKENS,
            deadline=deadline,
        )
    chosen: dict[tuple[str, int], tuple[series_providers.SeriesProvider, StoredEntity, str]] = {}
    for assignment in reply.assignments:
        provider = by_name.get(assignment.provider)
        if provider is not None and 0 <= assignment.entity < len(entities):
            key = (provider.name, assignment.entity)
            chosen.setdefault(key, (provider, entities[assignment.entity], assignment.query.strip()))
    return list(chosen.values())


def _fetched(
    provider: series_providers.SeriesProvider,
    entity: StoredEntity,
    query: str,
    start: datetime,
    end: datetime,
    artifact_id: int,
    limits: Limits,
) -> tuple[list[SeriesInput], str | None]:
    """The provider's series for `query` (the entity's identifier) as series to store (the points
    in the window), or the error that stopped it: a provider is the deployment's code, and what it
    returns is held to the rules of a caller's series, so that it never fails the remember."""
    try:
        returned = provider.fetch(query, start, end)
        series = []
        for one in returned:
            points = tuple(
                timeseries.Point(at, float(value)) for at, value in one.points if start <= at <= end
            )
            if points:
                candidate = SeriesInput(
                    key=one.key,
                    points=points,
                    name=one.name or None,
                    unit=one.unit or None,
                    anchors=(Anchor(entity_id=entity.id), Anchor(artifact_id=artifact_id)),
                    provider=provider.name,
                )
                timeseries.checked_series([candidate], limits)
                series.append(candidate)
    except BadRequest as error:
        return [], f"The timeseries provider returned a series that cannot be stored: {error.message}"
    except Exception:  # its failure is reported, never shown: it may hold anything
        return [], "The timeseries provider failed."
    return series, None if series else "The timeseries provider returned no series in the period."
