"""The MCP server of gligabao (`gligabao mcp --api URL`): a user's memory as Model Context Protocol
tools (`remember`, `query`, `search`, `correct`, `forget`, `session`) and resources (the user's datasets), built on the
official `mcp` SDK (the `[mcp]` extra) and calling the API through `gligabao.client.Memory`.

The user (and the default dataset) are the command's: the model never chooses whose memory it
reads. Tool results are short texts written for a model: what was stored or found, with the ids
`forget` takes. An API error is a tool error carrying the API's status and text, except the 404 of
a dataset nothing has been remembered in yet: the read tools (query, search, session) say memory
is empty, since that is a new user's first turn, not a failure.

Served over stdio, or over streamable HTTP guarded as `gligabao.client.mcp_http` says (DNS-rebinding
protection always; the bearer token of GB_MCP_TOKEN, required off loopback).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import Resource as ResourceListing
from pydantic import Field

from gligabao import __version__
from gligabao.api.correction_models import CorrectionResponse
from gligabao.api.readback_models import SessionReadback
from gligabao.api.remember_models import AcceptedResponse, RememberResponse
from gligabao.api.search_models import ScoredEdge, ScoredEntity, ScoredPassage
from gligabao.client.errors import ApiError, GligabaoError, NotFoundError
from gligabao.client.mcp_http import RequireBearerToken, require_token_off_loopback, transport_security
from gligabao.client.memory import Memory, QueryResult, SearchResult

SERVER_NAME = "gligabao"
DATASETS_URI = "gligabao://datasets"
DATASET_URI = "gligabao://datasets/{dataset}"
DATASET_GRAPH_ROWS = 200  # of a dataset resource: its first page of entities and edges
SESSION_PAGE_ITEMS = 50
JSON = "application/json"

INSTRUCTIONS = """\
Long-term memory for this user: a knowledge graph of the people, organisations, places, projects, \
preferences and events they told you about, with when each fact held. It lasts across conversations.
- Before answering anything that may depend on earlier conversations, call `query`.
- When the user tells you something worth keeping, call `remember` with it in plain sentences.
- When a stored fact is wrong or has ended, find its id (query's evidence, remember's result, or \
`session`) and call `correct`; when the user asks you to forget something, call `forget`.
Pass a session_id (the conversation's id) to remember and query when you have one.
Answer from what `query` returns; if memory does not know, say so rather than guess."""

REMEMBER = """\
Store information in the user's long-term memory, for later conversations.

Call it when the user tells you something worth keeping: facts about themselves, people, \
organisations, places, projects, decisions, preferences, plans and events. Do not store small \
talk, your own reasoning, or what memory already holds.

Pass `text` as complete, self-contained sentences, with names rather than pronouns and dates when \
known ("Alice moved from Paris to Rome in March 2025." rather than "she moved there"). One call \
per message or topic. Memory extracts the entities and facts, links them to what it already knows \
and, when a fact changed (a new employer, a new city), closes the old one: it stays in history, no \
longer current.

Returns the entities and facts stored, with their ids ([entity N], [edge N], artifact N), and the \
facts the text superseded."""

QUERY = """\
Ask the user's long-term memory a question in natural language ("Where does Alice work now?", \
"What did we decide about the launch date?", "What does the user like to eat?").

Call it before answering anything that may depend on earlier conversations, and whenever the \
user refers to something you were told before. Ask one specific question per call; rephrase and \
ask again if the first answer misses.

Returns an answer written only from stored facts, then the evidence it rests on: facts \
([edge N] source relation target, with the times they held), entities ([entity N]) and passages \
of remembered texts. If memory does not know, the answer says so: do not invent. `as_of` (RFC \
3339, e.g. 2024-06-01T00:00:00Z) asks about that moment, superseded facts included."""

SEARCH = """\
Search the user's long-term memory without asking for an answer: the stored facts, entities and \
passages most relevant to a few words ("Alice employer", "launch date"), each with its relevance \
score and why it was found (keyword, vector, expansion, recent). No model writes anything.

Call it instead of `query` when you will reason over the facts yourself: it is cheaper and faster.

Narrow it with `relations` (e.g. ["works_at"]), `entity_types` (e.g. ["person"]), `session_ids`, \
`metadata` (labels given when remembering, e.g. {"source": "crm"}) or `include_expired` (add \
superseded facts). Returns at most `limit` items in all (facts, entities and passages together), \
best first, with their ids."""

FORGET = """\
Delete something from the user's long-term memory, permanently.

Call it when the user asks you to forget something (a fact that is only wrong or over: \
`correct` it, which keeps its history). First find the id: `query` evidence and `remember` results show \
[edge N] and [entity N]; `session` shows the artifacts (remembered texts) of a conversation.
- kind "edge": one fact.
- kind "entity": an entity and every fact about it.
- kind "artifact": a remembered text or image, with the entities and facts only it supports.

Returns how many texts, chunks, entities and facts were deleted."""

SESSION = """\
Read back what one conversation (session) put into the user's long-term memory: the texts \
remembered in it (artifact ids and previews), the entities it mentioned and the facts it stated, \
with their ids and times.

Call it to review or correct what a conversation stored (then `forget` by id), or to recall what \
was said in a given session. Returns at most 50 of each; when there are more it ends with a \
cursor: pass it as `cursor` to read the next page."""

CORRECT = """\
Correct one stored fact of the user's long-term memory by hand.

Call it when the user says a stored fact is wrong or has ended ("No, Alice works at Globex", "Bob \
left Acme in May"). First find the fact's id ([edge N]) in `query` evidence, a `remember` result or `session`. Give \
only what changes: `description` (the fact as one sentence), `target` (the entity it points to, by \
name), `valid_at` (when it began). The old fact stays in history, superseded; the corrected one \
replaces it. Only `invalid_at` (when it stopped holding) ends the fact without a replacement. \
`reason`: why, in a few words.

Returns the fact as it now stands, with its new id."""

Dataset = Annotated[
    str | None,
    Field(description="the dataset (a separate memory of the same user); default the server's"),
]
SessionId = Annotated[
    str | None,
    Field(description="the conversation's id, to group what it stored and for `session` later"),
]

Result = TypeVar("Result")


class MemoryMcpServer(MCPServer):
    """MCPServer whose resource list names each of the user's datasets, read when listed."""

    def __init__(self, memory: Memory, **kwargs: Any):
        super().__init__(**kwargs)
        self.memory = memory

    async def list_resources(self) -> list[ResourceListing]:
        listed = await super().list_resources()
        try:
            datasets = (await anyio.to_thread.run_sync(self.memory.datasets)).datasets
        except GligabaoError:  # the static resource still lists; reading it tells the error
            return listed
        return listed + [
            ResourceListing(
                uri=DATASET_URI.format(dataset=summary.name),
                name=f"dataset {summary.name}",
                description=f"{summary.entities} entities, {summary.edges} live facts, "
                f"{summary.artifacts} texts remembered: its graph (first {DATASET_GRAPH_ROWS} rows)",
                mime_type=JSON,
            )
            for summary in datasets
        ]


def build_server(memory: Memory) -> MemoryMcpServer:
    """The MCP server of `memory`'s user (its user_id and default dataset)."""
    server = MemoryMcpServer(
        memory, name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(description=REMEMBER)
    def remember(
        text: Annotated[str, Field(description="what to remember, as complete sentences")],
        session_id: SessionId = None,
        reference_time: Annotated[
            str | None,
            Field(
                description="RFC 3339 time the text was said or written, if not now (2025-01-31T09:00:00Z)"
            ),
        ] = None,
        dataset: Dataset = None,
    ) -> str:
        stored = _api(
            lambda: memory.remember(
                text, session_id=session_id, reference_time=reference_time, dataset=dataset
            )
        )
        return remembered_text(stored)

    @server.tool(description=QUERY)
    def query(
        question: Annotated[str, Field(description="the question, in natural language")],
        session_id: SessionId = None,
        as_of: Annotated[
            str | None, Field(description="RFC 3339: answer as things stood then (default: now)")
        ] = None,
        dataset: Dataset = None,
    ) -> str:
        answered = _api(lambda: memory.query(question, session_id=session_id, as_of=as_of, dataset=dataset))
        return (
            answer_text(answered) if answered.dataset_exists else empty_memory_text(dataset or memory.dataset)
        )

    @server.tool(description=SEARCH)
    def search(
        query: Annotated[str, Field(description="what to look for: a few words or a question")],
        limit: Annotated[
            int, Field(description="at most this many items in all (facts, entities, passages)", ge=1, le=100)
        ] = 10,
        relations: Annotated[list[str] | None, Field(description="only facts of these relations")] = None,
        entity_types: Annotated[list[str] | None, Field(description="only entities of these types")] = None,
        session_ids: Annotated[list[str] | None, Field(description="only what these sessions stated")] = None,
        metadata: Annotated[
            dict[str, str | int | float | bool] | None,
            Field(description="only what was remembered with these labels"),
        ] = None,
        include_expired: Annotated[bool, Field(description="add superseded facts")] = False,
        dataset: Dataset = None,
    ) -> str:
        filters = {
            "relations": relations,
            "entity_types": entity_types,
            "session_ids": session_ids,
            "metadata": metadata,
            "include_expired": include_expired or None,
        }
        found = _api(
            lambda: memory.search(
                query, limit=limit, dataset=dataset, filters={k: v for k, v in filters.items() if v}
            )
        )
        return search_text(found, limit) if found.dataset_exists else empty_memory_text(found.dataset)

    @server.tool(description=FORGET)
    def forget(
        kind: Annotated[
            Literal["edge", "entity", "artifact"],
            Field(description="edge (a fact), entity (and its facts) or artifact (a remembered text)"),
        ],
        id: Annotated[int, Field(description="the id shown as [edge N], [entity N] or artifact N", ge=1)],
    ) -> str:
        forget_by_kind = {
            "edge": memory.forget_edge,
            "entity": memory.forget_entity,
            "artifact": memory.forget_artifact,
        }
        deleted = _api(lambda: forget_by_kind[kind](id)).deleted
        return (
            f"Forgot {kind} {id}: deleted {deleted.artifacts} texts, {deleted.chunks} chunks, "
            f"{deleted.entities} entities, {deleted.edges} facts."
        )

    @server.tool(description=CORRECT)
    def correct(
        id: Annotated[int, Field(description="the fact's id, shown as [edge N]", ge=1)],
        description: Annotated[str | None, Field(description="the fact as one plain sentence")] = None,
        target: Annotated[str | None, Field(description="the name of the entity the fact points to")] = None,
        valid_at: Annotated[str | None, Field(description="RFC 3339: when the fact began to hold")] = None,
        invalid_at: Annotated[str | None, Field(description="RFC 3339: when it stopped holding")] = None,
        reason: Annotated[str | None, Field(description="why, in a few words")] = None,
    ) -> str:
        corrected = _api(
            lambda: memory.correct(
                id,
                description=description,
                target=target,
                valid_at=valid_at,
                invalid_at=invalid_at,
                reason=reason,
            )
        )
        return corrected_text(id, corrected)

    @server.tool(description=SESSION)
    def session(
        session_id: Annotated[str, Field(description="the conversation's id")],
        dataset: Dataset = None,
        cursor: Annotated[str | None, Field(description="the cursor of the previous page")] = None,
    ) -> str:
        name = dataset or memory.dataset

        def read() -> SessionReadback | None:
            try:
                return memory.session(session_id, dataset=name, limit=SESSION_PAGE_ITEMS, cursor=cursor)
            except NotFoundError as error:
                if error.is_missing_dataset(name):
                    return None
                raise

        page = _api(read)
        return session_text(page) if page is not None else empty_memory_text(name)

    @server.resource(
        DATASETS_URI,
        name="datasets",
        description="the user's datasets (separate memories) with their counts of texts, entities and "
        "facts, and of texts still queued or failed in the background",
        mime_type=JSON,
    )
    def datasets() -> str:
        listed = _resource(memory.datasets)
        return json.dumps({"user_id": memory.user_id, **listed.model_dump(mode="json")}, indent=1)

    @server.resource(
        DATASET_URI,
        name="dataset",
        description=f"one dataset: its counts and the first {DATASET_GRAPH_ROWS} rows of its graph "
        "(entities, then live facts)",
        mime_type=JSON,
    )
    def dataset(dataset: str) -> str:
        summary = next((d for d in _resource(memory.datasets).datasets if d.name == dataset), None)
        if summary is None:
            raise ResourceNotFoundError(f"no dataset {dataset!r} for user {memory.user_id!r}")
        graph = _resource(lambda: memory.graph(dataset=dataset, limit=DATASET_GRAPH_ROWS))
        return json.dumps(
            {"dataset": summary.model_dump(mode="json"), "graph": graph.model_dump(mode="json")}, indent=1
        )

    return server


def _api(call: Callable[[], Result]) -> Result:
    """The API's answer; its error as a tool error the model reads (status and the API's text)."""
    try:
        return call()
    except ApiError as error:
        raise ToolError(f"memory refused ({error.status}): {error.error}") from None
    except GligabaoError as error:
        raise ToolError(f"memory unavailable: {error}") from None


def _resource(call: Callable[[], Result]) -> Result:
    try:
        return call()
    except NotFoundError as error:
        raise ResourceNotFoundError(error.error) from None
    except ApiError as error:
        raise ResourceError(f"memory refused ({error.status}): {error.error}") from None
    except GligabaoError as error:
        raise ResourceError(f"memory unavailable: {error}") from None


# --- what the model reads ------------------------------------------------------------------------


def _times(valid_at: str | None, invalid_at: str | None, expired_at: str | None = None) -> str:
    held = f"{valid_at or '?'} → {invalid_at or 'now'}" if valid_at or invalid_at else "time unknown"
    return f"{held}; superseded {expired_at}" if expired_at else held


def remembered_text(stored: RememberResponse | AcceptedResponse) -> str:
    if isinstance(stored, AcceptedResponse):
        return (
            f"Accepted: artifact {stored.artifact_id} is being remembered in the background (a long "
            "text); its facts will be queryable in a minute or two."
        )
    where = f"dataset {stored.dataset}" + (f", session {stored.session_id}" if stored.session_id else "")
    lines = [f"Remembered as artifact {stored.artifact_id} ({where})."]
    if stored.description:
        lines.append(f"The image shows: {stored.description}")
    if stored.entities:
        lines.append("Entities:")
        lines += [
            f"- [entity {e.id}] {e.name} ({e.type}{', new' if e.created else ''})"
            + (f": {e.description}" if e.description else "")
            for e in stored.entities
        ]
    if stored.edges:
        lines.append("Facts:")
        lines += [
            f"- [edge {e.id}] {e.source} {e.relation} {e.target}: {e.description} "
            f"({_times(e.valid_at, e.invalid_at)}{'' if e.created else ', already known'})"
            for e in stored.edges
        ]
    if stored.superseded:
        lines.append("No longer current (superseded by this text):")
        lines += [f"- [edge {e.id}] until {e.invalid_at or e.expired_at}" for e in stored.superseded]
    if not stored.entities and not stored.edges:
        lines.append("No entity or fact was found in it.")
    return "\n".join(lines)


def corrected_text(edge_id: int, corrected: CorrectionResponse) -> str:
    e = corrected.edge
    fact = f"[edge {e.id}] {e.source} {e.relation} {e.target}: {e.description or ''} ({_times(e.valid_at, e.invalid_at)})"
    if not corrected.superseded:
        return f"Ended fact {edge_id}: {fact}."
    return (
        f"Corrected fact {edge_id}, now superseded by {fact} (correction artifact {corrected.artifact_id})."
    )


def empty_memory_text(dataset: str) -> str:
    """What a read tool says when the user has no such dataset: nothing remembered there yet."""
    return (
        f"Memory is empty: dataset {dataset} does not exist yet (nothing has been remembered in it). "
        "Nothing is known from earlier conversations; `remember` creates it."
    )


def answer_text(answer: QueryResult) -> str:
    evidence = answer.evidence
    lines = [answer.answer]
    if evidence.edges or evidence.entities or evidence.passages:
        lines += ["", "Evidence:"]
    lines += [
        f"- [edge {e.id}] {e.source} {e.relation} {e.target}"
        + (f": {e.description}" if e.description else "")
        + f" ({_times(e.valid_at, e.invalid_at, e.expired_at)})"
        for e in evidence.edges
    ]
    lines += [
        f"- [entity {e.id}] {e.name} ({e.type})" + (f": {e.description}" if e.description else "")
        for e in evidence.entities
    ]
    lines += [
        f"- passage {p.index} of artifact {p.parent_id}: {p.text or p.summary or ''}".rstrip()
        for p in evidence.passages
    ]
    return "\n".join(lines)


def best_items(found: SearchResult, limit: int) -> list[ScoredEdge | ScoredEntity | ScoredPassage]:
    """The `limit` best items of every kind together. The API's `limit` counts each kind; a model
    asking for 3 means 3. The scores are on one scale (the ranking orders a prompt's context by them
    across kinds); on a tie facts come first, then entities, then passages."""
    return sorted([*found.edges, *found.entities, *found.passages], key=lambda item: -item.score)[:limit]


def scored_line(item: ScoredEdge | ScoredEntity | ScoredPassage) -> str:
    if isinstance(item, ScoredEdge):
        return (
            f"- [edge {item.id}] {item.source} {item.relation} {item.target}"
            + (f": {item.description}" if item.description else "")
            + f" ({_times(item.valid_at, item.invalid_at, item.expired_at)})"
            + f" score {item.score:.3f} {'+'.join(item.reasons)}"
        )
    if isinstance(item, ScoredEntity):
        return (
            f"- [entity {item.id}] {item.name} ({item.type})"
            + (f": {item.description}" if item.description else "")
            + f" score {item.score:.3f} {'+'.join(item.reasons)}"
        )
    passage = item.text or item.summary or ""
    return f"- passage {item.index} of artifact {item.parent_id}: {passage} score {item.score:.3f}"


def search_text(found: SearchResult, limit: int) -> str:
    items = best_items(found, limit)
    if not items:
        return f"Nothing found in dataset {found.dataset}."
    return "\n".join(
        [f"Found in dataset {found.dataset} (best first; score, then why):", *map(scored_line, items)]
    )


def session_text(page: SessionReadback) -> str:
    lines = [f"Session {page.session_id} (dataset {page.dataset}):"]
    if not (page.artifacts or page.entities or page.edges):
        return lines[0] + " nothing stored."
    if page.artifacts:
        lines.append("Texts remembered:")
        lines += [
            f"- artifact {a.id} ({a.kind}, {a.status}, said {a.reference_time or a.created_at}): {a.preview}"
            + ("…" if a.chars > len(a.preview) else "")
            for a in page.artifacts
        ]
    if page.entities:
        lines.append("Entities:")
        lines += [
            f"- [entity {e.id}] {e.name} ({e.type})" + (f": {e.description}" if e.description else "")
            for e in page.entities
        ]
    if page.edges:
        lines.append("Facts:")
        lines += [
            f"- [edge {e.id}] {e.source} {e.relation} {e.target}: {e.description} "
            f"({_times(e.valid_at, e.invalid_at, e.expired_at)})"
            for e in page.edges
        ]
    if page.next_cursor:
        lines.append(f"More: call session again with cursor={page.next_cursor}")
    return "\n".join(lines)


def serve(memory: Memory) -> None:
    """Serve over stdio (what desktop clients launch)."""
    build_server(memory).run("stdio")


def serve_http(
    memory: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> None:
    """Serve streamable HTTP at http://host:port/mcp: DNS-rebinding protection always on, and
    `token` required of every request when given (it must be, off loopback: mcp_http)."""
    import uvicorn

    token = (token or "").strip() or None  # a variable read from a file may end in a newline
    require_token_off_loopback(host, token)
    app = build_server(memory).streamable_http_app(
        transport_security=transport_security(
            host, port, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins
        ),
        host=host,
    )
    uvicorn.run(RequireBearerToken(app, token) if token else app, host=host, port=port, log_level="warning")
