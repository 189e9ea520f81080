"""remember's `web_search`: what the web says lately about a text's key entities, as texts to
remember (artifacts of kind web_search, extracted into the graph like any text).

As the gligabao server does: the key entities are the text's own (concepts left out) with the most
facts in this remember, at most GB_WEB_SEARCH_ENTITIES of them, ties in the extraction's order;
each is one web search call (ai/web_search.py), all at once. A call's findings become a text: the
model's briefing, then the pages it rests on. A call that found nothing (an empty briefing, or
NO_RESULTS) gives no text; one that failed gives its error instead, and the others stand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from gligabao.ai.web_search import SearchSubject, WebFindings, search_the_web, web_search_llm
from gligabao.errors import GbError
from gligabao.memory.ports import Memory
from gligabao.model import StoredEdge, StoredEntity
from gligabao.observability.inferences import CallContext

# Entities of these types are ideas, not actors in the world's news: never searched.
UNSEARCHED_TYPES = frozenset({"concept"})

# One web search call: the subject's findings, recorded on the call context.
Searcher = Callable[[CallContext, SearchSubject], WebFindings]


@dataclass(frozen=True)
class WebSearchText:
    """What the web search about one key entity yields.

    `text` is the artifact's text (the briefing, then a "Sources:" list), `briefing` what to
    extract from it (the gligabao server extracts the briefing alone: the sources are not facts);
    both None when the search found nothing or failed (`error`, the service's message).
    `sources` are the artifact's `sources` ({url, title}, and page_age when known)."""

    entity: StoredEntity
    query: str  # what was searched for: "latest world events and news about <name> (<type>)"
    text: str | None
    briefing: str | None
    sources: tuple[dict[str, str], ...] = ()
    searches: tuple[str, ...] = ()  # the queries the model ran, in order
    cost_usd: float | None = None  # the web search call's: tokens and searches
    error: str | None = None


def require_web_search(memory: Memory) -> None:
    """NotConfigured (503) unless the deployment's LLM has the web search tool: before any call."""
    web_search_llm(memory.llm)


def key_entities(
    entities: Sequence[StoredEntity], edges: Sequence[StoredEdge], most: int
) -> list[StoredEntity]:
    """The entities to search for: those of `entities` (the remember's, in extraction order) with
    the most facts among `edges` (the remember's), at most `most`, concepts left out; a tie keeps
    the extraction's order. An entity without a fact counts 0 and is still a candidate."""
    facts = Counter(end for edge in edges for end in {edge.source_id, edge.target_id})
    candidates = [e for e in _each_once(entities) if e.type.strip().lower() not in UNSEARCHED_TYPES]
    ranked = sorted(enumerate(candidates), key=lambda item: (-facts[item[1].id], item[0]))
    return [entity for _, entity in ranked[:most]]


def web_search_texts(
    memory: Memory,
    call: CallContext,
    entities: Sequence[StoredEntity],
    edges: Sequence[StoredEdge],
    *,
    model: str | None = None,
    deadline: float | None = None,
    search: Searcher | None = None,
) -> list[WebSearchText]:
    """One web search per key entity of the remember (`entities` and `edges`, what it yielded),
    all at once, in rank order. Each call is recorded on `call` (the caller saves its inferences).
    `model`: the request's model of stage web_search (else the default). `search` replaces the
    call (tests). NotConfigured (503) when the LLM has no web search tool, before any call."""
    chosen = key_entities(entities, edges, memory.limits.web_search_entities)
    if not chosen:
        return []
    search = search or _searcher(memory, model, deadline)
    workers = min(len(chosen), memory.limits.extract_concurrency)  # the provider's rate limits
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="web-search") as pool:
        return list(pool.map(lambda entity: _search_one(search, call, entity), chosen))


def findings_text(findings: WebFindings) -> str | None:
    """The artifact's text of what was found: the briefing, then each source on a line
    ("- <title> <<url>> (<page_age>)"); None when nothing was found."""
    if not findings.found:
        return None
    lines = [_source_line(page.title, page.url, page.page_age) for page in findings.sources]
    return findings.text + ("\n\nSources:\n" + "\n".join(lines) if lines else "")


def _searcher(memory: Memory, model: str | None, deadline: float | None) -> Searcher:
    llm = web_search_llm(memory.llm)
    return lambda call, subject: search_the_web(
        llm,
        call,
        subject,
        today=memory.clock().date(),
        max_uses=memory.limits.web_search_max_uses,
        model=model,
        deadline=deadline,
    )


def _search_one(search: Searcher, call: CallContext, entity: StoredEntity) -> WebSearchText:
    subject = SearchSubject(entity.name, entity.type, entity.description)
    found = partial(WebSearchText, entity, subject.query)
    try:
        findings = search(call, subject)
    except GbError as error:  # the remember stands: the response says this search failed
        return found(None, None, error=error.message)
    text = findings_text(findings)
    return found(
        text,
        findings.text if text is not None else None,
        sources=tuple(page.as_source() for page in findings.sources),
        searches=tuple(s.query for s in findings.searches),
        cost_usd=findings.cost_usd,
    )


def _source_line(title: str, url: str, page_age: str | None) -> str:
    line = f"- {title} <{url}>" if title else f"- <{url}>"
    return f"{line} ({page_age})" if page_age else line


def _each_once(entities: Sequence[StoredEntity]) -> list[StoredEntity]:
    """The entities without repeats (a remember may list an entity twice, e.g. over chunks)."""
    seen: set[int] = set()
    kept = []
    for entity in entities:
        if entity.id not in seen:
            seen.add(entity.id)
            kept.append(entity)
    return kept
