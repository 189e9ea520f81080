"""`Memory`: the gligabao API from Python, one typed method per route.

    from gligabao.client import Memory, SigV4

    memory = Memory("https://abc123.execute-api.eu-west-1.amazonaws.com", auth=SigV4(), user_id="u1")
    memory.remember("Alice works at Acme.", session_id="chat-42")
    print(memory.query("Where does Alice work?").answer)

Results are the API's own response models (gligabao.api.*_models); those of `query`, `context`
and `search` add `dataset_exists`: a dataset nothing has been remembered in yet is an empty result
there, not the API's 404. Errors are `ApiError`s carrying the status and the API's error text
(gligabao.client.errors). Reads, queries and forgets are retried on 429, 502, 503 and 504 and on
a broken connection, with exponential backoff (Retry-After honoured); a remember is retried only
with an Idempotency-Key, which the client generates unless told otherwise, so a retry never
stores a text twice.
"""

from __future__ import annotations

import base64
import json
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx2
from pydantic import BaseModel, Field, ValidationError

from gligabao import __version__
from gligabao.api.context_models import ContextResponse
from gligabao.api.correction_models import CorrectionResponse
from gligabao.api.edges_models import EdgeList, EdgeResource
from gligabao.api.facts_models import FactsInput
from gligabao.api.forget_models import ErasureReceipt, ForgetResponse
from gligabao.api.graph_models import GRAPHML_MEDIA_TYPE, NEXT_CURSOR_HEADER, GraphExport
from gligabao.api.models import DatasetDeleted, DatasetList, DatasetSummary, Health
from gligabao.api.query_models import Evidence, QueryResponse
from gligabao.api.readback_models import ArtifactReadback, Edge, EntityReadback, SessionReadback
from gligabao.api.remember_models import AcceptedResponse, BatchAcceptedResponse, RememberResponse
from gligabao.api.search_models import SearchResponse
from gligabao.api.trajectory_models import TrajectoryList, TrajectoryRecord
from gligabao.client.auth import BearerToken
from gligabao.client.errors import (
    ApiConnectionError,
    ApiTimeoutError,
    GligabaoError,
    NotFoundError,
    RememberFailed,
    UnexpectedResponseError,
    api_error,
    retry_after_seconds,
)

LOCAL_API_URL = "http://127.0.0.1:7878"  # `make serve`
DEFAULT_DATASET = "main"
DEFAULT_TIMEOUT_SECONDS = 60.0  # API Gateway ends a request at 29 s; the local API's fakes are slower
CONNECT_TIMEOUT_SECONDS = 10.0
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
FINISHED_STATUSES = ("done", "failed")
# The API's own answer when nothing in memory bears on the question (gligabao.memory.query).
NO_CONTEXT_ANSWER = "I don't have any information in memory to answer that."
# An image's media type from its first bytes (the API checks them against media_type too).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

Model = TypeVar("Model", bound=BaseModel)


class _Generated:
    def __repr__(self) -> str:
        return "GENERATED"


# The default Idempotency-Key of a remember: a new random key per call, the same for its retries.
GENERATED: Any = _Generated()


@dataclass(frozen=True)
class Retries:
    """How idempotent calls are retried: at most `max_retries` more attempts, waiting
    `base_delay_s * 2**attempt` (with full jitter, at most `max_delay_s`) or the Retry-After asked."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 30.0
    statuses: frozenset[int] = RETRYABLE_STATUSES

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        return random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2**attempt))


NO_RETRIES = Retries(max_retries=0)


@dataclass(frozen=True)
class GraphMLPage:
    """A page of the GraphML export: a document of its own, and the cursor of the next page."""

    document: str
    next_cursor: str | None


def _dataset_exists() -> Any:
    return Field(
        default=True,
        description="False when the user has no such dataset yet (nothing remembered in it): the API "
        "answered 404 and the client made the result empty",
    )


class QueryResult(QueryResponse):
    """`query()`'s answer: the API's QueryResponse, and whether the dataset exists."""

    dataset_exists: bool = _dataset_exists()


class ContextResult(ContextResponse):
    """`context()`'s answer: the API's ContextResponse, and whether the dataset exists."""

    dataset_exists: bool = _dataset_exists()


class SearchResult(SearchResponse):
    """`search()`'s answer: the API's SearchResponse, and whether the dataset exists."""

    dataset_exists: bool = _dataset_exists()


class Memory:
    """A client of one gligabao API for one user.

    `url`: the API's base URL (the stack's ApiUrl output, or http://127.0.0.1:7878 for `make serve`).
    `auth`: `SigV4()` (IAM), `BearerToken(token)` or a token string (JWT), None (the local API).
    `user_id`: the user every call is for (with a JWT it may be left out: the token's subject is used).
    `dataset`: the default dataset of the calls that take one.
    """

    def __init__(
        self,
        url: str = LOCAL_API_URL,
        auth: httpx2.Auth | str | None = None,
        *,
        user_id: str | None = None,
        dataset: str = DEFAULT_DATASET,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        retries: Retries | int = Retries(),
        headers: Mapping[str, str] | None = None,
        transport: httpx2.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = url.rstrip("/")
        self.user_id = user_id
        self.dataset = dataset
        self.retries = retries if isinstance(retries, Retries) else Retries(max_retries=retries)
        self._sleep = sleep
        self._http = httpx2.Client(
            base_url=self.url,
            auth=BearerToken(auth) if isinstance(auth, str) else auth,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_SECONDS)),
            headers={"User-Agent": f"gligabao-client/{__version__}", **(headers or {})},
            transport=transport,
        )
        self._owns_http = True

    def for_user(self, user_id: str, *, dataset: str | None = None) -> Memory:
        """The same API for another user (sharing the connection pool)."""
        other = object.__new__(Memory)
        other.__dict__.update(self.__dict__)
        other.user_id, other.dataset, other._owns_http = user_id, dataset or self.dataset, False
        return other

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({self.url!r}, user_id={self.user_id!r}, dataset={self.dataset!r})"

    # --- remember ------------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        session_id: str | None = None,
        reference_time: datetime | str | None = None,
        dataset: str | None = None,
        run_async: bool = False,
        reasoning: str | Mapping[str, str] | None = None,
        models: Mapping[str, str] | None = None,
        eval: bool = False,
        idempotency_key: str | None = GENERATED,
        kind: str | None = None,
        metadata: Mapping[str, str | int | float | bool] | None = None,
    ) -> RememberResponse | AcceptedResponse:
        """Remember a text: its entities and facts go into the dataset's graph. `kind`: knowledge
        (the server's default) or episode, stored on the artifact. `metadata`: your own labels (a flat
        object of strings, numbers and booleans), stored on the artifact, filtered on by `search`.

        A `RememberResponse` (what was stored), or an `AcceptedResponse` (202: the artifact is
        pending) when `run_async` or when the text is longer than the API's threshold; `wait()`
        then waits for it. `eval`: record the call's ATIF trajectory and return it as `trajectory`
        (asynchronous: `trajectories(artifact_id=...)` finds it once done). `idempotency_key`:
        default a new random key (so the call is retried safely); None sends none and disables the
        retries."""
        body = self._body(
            text=text,
            kind=kind,
            metadata=dict(metadata) if metadata else None,
            session_id=session_id,
            reference_time=_time(reference_time),
            dataset=dataset or self.dataset,
            reasoning=reasoning,
            models=models,
            eval=eval or None,
            **{"async": run_async or None},
        )
        return self._remembered(body, idempotency_key)

    def remember_image(
        self,
        image: bytes | str | Path,
        *,
        media_type: str | None = None,
        caption: str | None = None,
        session_id: str | None = None,
        reference_time: datetime | str | None = None,
        dataset: str | None = None,
        reasoning: str | Mapping[str, str] | None = None,
        models: Mapping[str, str] | None = None,
        eval: bool = False,
        idempotency_key: str | None = GENERATED,
        metadata: Mapping[str, str | int | float | bool] | None = None,
    ) -> RememberResponse:
        """Remember an image (bytes, or a file's path): a model describes it, and its entities and
        facts go into the graph. `media_type`: default read from the image's first bytes. `eval`:
        record the call's trajectory."""
        data = Path(image).read_bytes() if isinstance(image, (str, Path)) else image
        body = self._body(
            image={"media_type": media_type or _media_type(data), "data": base64.b64encode(data).decode()},
            caption=caption,
            metadata=dict(metadata) if metadata else None,
            session_id=session_id,
            reference_time=_time(reference_time),
            dataset=dataset or self.dataset,
            reasoning=reasoning,
            models=models,
            eval=eval or None,
        )
        return _parsed(RememberResponse, self._remember_call("/v1/gb/remember", body, idempotency_key))

    def remember_facts(
        self,
        facts: FactsInput | Mapping[str, Any],
        *,
        session_id: str | None = None,
        reference_time: datetime | str | None = None,
        dataset: str | None = None,
        run_async: bool = False,
        reasoning: str | Mapping[str, str] | None = None,
        models: Mapping[str, str] | None = None,
        idempotency_key: str | None = GENERATED,
        metadata: Mapping[str, str | int | float | bool] | None = None,
    ) -> RememberResponse | AcceptedResponse:
        """Remember facts your own pipeline extracted: `{"entities": [{"name", "type"?,
        "description"?}], "edges": [{"source", "target", "relation", "description"?, "valid_at"?,
        "invalid_at"?}]}`, the extraction's shape. No extraction call; the rest is a text's."""
        given = (
            facts.model_dump(mode="json", exclude_unset=True) if isinstance(facts, BaseModel) else dict(facts)
        )
        body = self._body(
            facts=given,
            metadata=dict(metadata) if metadata else None,
            session_id=session_id,
            reference_time=_time(reference_time),
            dataset=dataset or self.dataset,
            reasoning=reasoning,
            models=models,
            **{"async": run_async or None},
        )
        return self._remembered(body, idempotency_key)

    def remember_batch(
        self,
        texts: Sequence[str | Mapping[str, Any]],
        *,
        dataset: str | None = None,
        reasoning: str | Mapping[str, str] | None = None,
        models: Mapping[str, str] | None = None,
        eval: bool = False,
        idempotency_key: str | None = GENERATED,
        metadata: Mapping[str, str | int | float | bool] | None = None,
    ) -> BatchAcceptedResponse:
        """Remember up to 100 texts in the background, applied in order of reference_time. Each
        item is a text, or a mapping with `text` and optional `session_id` and `reference_time`.
        `eval`: every text's remember records its trajectory (`trajectories(artifact_id=...)`)."""
        items = [
            {"text": item}
            if isinstance(item, str)
            else {k: _time(v) if k == "reference_time" else v for k, v in item.items() if v is not None}
            for item in texts
        ]
        body = self._body(
            texts=items,
            metadata=dict(metadata) if metadata else None,
            dataset=dataset or self.dataset,
            reasoning=reasoning,
            models=models,
            eval=eval or None,
        )
        return _parsed(
            BatchAcceptedResponse, self._remember_call("/v1/gb/remember/batch", body, idempotency_key)
        )

    def wait(self, artifact_id: int, *, timeout: float = 300.0, interval: float = 1.0) -> ArtifactReadback:
        """Wait for an asynchronous remember to finish: the artifact once `done`; `RememberFailed`
        if it failed, `TimeoutError` if still pending or running after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            artifact = self.artifact(artifact_id)
            if artifact.status == "failed":
                raise RememberFailed(artifact_id, artifact.error)
            if artifact.status in FINISHED_STATUSES:
                return artifact
            if time.monotonic() + interval > deadline:
                raise TimeoutError(f"artifact {artifact_id} is still {artifact.status} after {timeout:g} s")
            self._sleep(interval)

    def wait_for_dataset(
        self, dataset: str | None = None, *, timeout: float = 600.0, interval: float = 2.0
    ) -> DatasetSummary:
        """Wait until none of the dataset's asynchronous remembers is queued (pending or running),
        as after a batch: the dataset's summary, whose `failed` counts the dataset's failed texts
        (of every batch, not only the last one's).
        `TimeoutError` if some are still queued after `timeout` seconds; `LookupError` when the
        user has no such dataset."""
        name = dataset or self.dataset
        deadline = time.monotonic() + timeout
        while True:
            summary = next((d for d in self.datasets().datasets if d.name == name), None)
            if summary is None:
                raise LookupError(f"no dataset {name!r}")
            if summary.queued == 0:
                return summary
            if time.monotonic() + interval > deadline:
                raise TimeoutError(f"dataset {name!r} still has {summary.queued} queued after {timeout:g} s")
            self._sleep(interval)

    # --- query ---------------------------------------------------------------------------------

    def query(
        self,
        query: str,
        *,
        session_id: str | None = None,
        dataset: str | None = None,
        as_of: datetime | str | None = None,
        reasoning: str | Mapping[str, str] | None = None,
        models: Mapping[str, str] | None = None,
        geo_nearby: bool | None = None,
        geo_radius_km: float | None = None,
        eval: bool = False,
        filters: Mapping[str, Any] | None = None,
    ) -> QueryResult:
        """Answer a question from the graph, with the evidence (entities, edges, passages) used.
        `as_of`: answer from the facts valid at that time. `eval`: record the call's ATIF trajectory
        and return it as `trajectory`. A dataset that does not exist yet is an empty memory: the
        API's answer for no context, no evidence, `dataset_exists` False (and no trajectory)."""
        name = dataset or self.dataset
        body = self._body(
            query=query,
            session_id=session_id,
            dataset=name,
            as_of=_time(as_of),
            reasoning=reasoning,
            models=models,
            geo_nearby=geo_nearby,
            geo_radius_km=geo_radius_km,
            eval=eval or None,
            filters=_filters(filters),
        )
        return self._unless_missing(
            name,
            lambda: self._call(QueryResult, "POST", "/v1/gb/query", json=body),
            lambda: QueryResult(
                session_id=session_id,
                answer=NO_CONTEXT_ANSWER,
                evidence=Evidence(entities=[], edges=[], passages=[]),
                dataset_exists=False,
            ),
        )

    def context(
        self,
        query: str,
        *,
        session_id: str | None = None,
        dataset: str | None = None,
        as_of: datetime | str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> ContextResult:
        """Retrieval only: the context an answer to `query` would be written from (the rendered
        text for your own prompt, and its entities, edges and passages), with no LLM call. A
        dataset that does not exist yet is an empty memory: an empty context, `dataset_exists`
        False (a new user's first turn)."""
        name = dataset or self.dataset
        body = self._body(
            query=query,
            session_id=session_id,
            dataset=name,
            as_of=_time(as_of),
            answer=False,
            filters=_filters(filters),
        )
        return self._unless_missing(
            name,
            lambda: self._call(ContextResult, "POST", "/v1/gb/query", json=body),
            lambda: ContextResult(
                session_id=session_id, context="", entities=[], edges=[], passages=[], dataset_exists=False
            ),
        )

    def search(
        self,
        query: str,
        *,
        dataset: str | None = None,
        limit: int | None = None,
        similarity_threshold: float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> SearchResult:
        """The entities, facts and passages most relevant to `query`, each with its `score` and
        `reasons` (keyword, vector, expansion, recent), with no LLM call; `limit`: at most this
        many of each kind. `filters`: `entity_types`, `relations`, `session_ids`, `metadata`,
        `valid_from`, `valid_to`, `created_from`, `created_to`, `include_expired`. A dataset that
        does not exist yet is an empty memory: empty lists, `dataset_exists` False."""
        name = dataset or self.dataset
        body = self._body(
            query=query,
            dataset=name,
            limit=limit,
            similarity_threshold=similarity_threshold,
            filters=_filters(filters),
        )
        return self._unless_missing(
            name,
            lambda: self._call(SearchResult, "POST", "/v1/gb/search", json=body, retry=True),
            lambda: SearchResult(dataset=name, entities=[], edges=[], passages=[], dataset_exists=False),
        )

    # --- facts ---------------------------------------------------------------------------------

    def edge(self, edge_id: int) -> EdgeResource:
        """One fact with its provenance: artifacts, sessions, what superseded it, what it superseded."""
        return self._call(EdgeResource, "GET", f"/v1/gb/edges/{int(edge_id)}", params=self._params())

    def edge_page(
        self,
        *,
        dataset: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> EdgeList:
        """A page of the dataset's facts (live ones unless `include_expired`), filtered as `search` is."""
        params = self._params(
            dataset=dataset or self.dataset, limit=limit, cursor=cursor, **_filter_params(filters)
        )
        return self._call(EdgeList, "GET", "/v1/gb/edges", params=params)

    def edges(
        self,
        *,
        dataset: str | None = None,
        limit: int | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> Iterator[Edge]:
        """Every fact of the dataset that `filters` lets through, a page (`limit`) at a time."""
        for page in _pages(
            lambda cursor: self.edge_page(dataset=dataset, limit=limit, cursor=cursor, filters=filters)
        ):
            yield from page.edges

    # --- datasets ------------------------------------------------------------------------------

    def datasets(self, *, limit: int | None = None, cursor: str | None = None) -> DatasetList:
        """A page of the user's datasets with their counts (artifacts, entities, live edges); all
        of them unless there are more than the server's page (then `next_cursor`)."""
        return self._call(
            DatasetList, "GET", "/v1/gb/datasets", params=self._params(limit=limit, cursor=cursor)
        )

    def delete_dataset(self, dataset: str) -> DatasetDeleted:
        """Delete a dataset and everything in it (the API answers 204; an older one, 200 with this body)."""
        response = self._send("DELETE", f"/v1/gb/datasets/{_segment(dataset)}", params=self._params())
        if response.status_code == 204:
            return DatasetDeleted(dataset=dataset, deleted=True)
        return _parsed(DatasetDeleted, response)

    # --- read back -----------------------------------------------------------------------------

    def session(
        self,
        session_id: str,
        *,
        dataset: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> SessionReadback:
        """A page of what a session touched: its artifacts, entities and edges (`next_cursor`
        for the next page; `session_pages()` walks them all)."""
        params = self._params(dataset=dataset or self.dataset, limit=limit, cursor=cursor)
        return self._call(SessionReadback, "GET", f"/v1/gb/sessions/{_segment(session_id)}", params=params)

    def session_pages(
        self, session_id: str, *, dataset: str | None = None, limit: int | None = None
    ) -> Iterator[SessionReadback]:
        return _pages(lambda cursor: self.session(session_id, dataset=dataset, limit=limit, cursor=cursor))

    def artifact(self, artifact_id: int) -> ArtifactReadback:
        """One artifact: its text, status (pending, running, done, failed), chunks, entities, edges."""
        return self._call(
            ArtifactReadback, "GET", f"/v1/gb/artifacts/{int(artifact_id)}", params=self._params()
        )

    def entity(
        self, entity_id: int, *, limit: int | None = None, cursor: str | None = None
    ) -> EntityReadback:
        """One entity and a page of its timeline: every edge touching it, live and superseded."""
        params = self._params(limit=limit, cursor=cursor)
        return self._call(EntityReadback, "GET", f"/v1/gb/entities/{int(entity_id)}", params=params)

    def entity_pages(self, entity_id: int, *, limit: int | None = None) -> Iterator[EntityReadback]:
        return _pages(lambda cursor: self.entity(entity_id, limit=limit, cursor=cursor))

    # --- graph export --------------------------------------------------------------------------

    def graph(
        self,
        *,
        dataset: str | None = None,
        include_expired: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> GraphExport:
        """A page of the dataset's graph: entities (by name), then edges (`graph_pages()` walks them)."""
        params = self._graph_params(dataset, include_expired, limit, cursor, "json")
        return self._call(GraphExport, "GET", "/v1/gb/graph", params=params)

    def graph_pages(
        self, *, dataset: str | None = None, include_expired: bool = False, limit: int | None = None
    ) -> Iterator[GraphExport]:
        return _pages(
            lambda cursor: self.graph(
                dataset=dataset, include_expired=include_expired, limit=limit, cursor=cursor
            )
        )

    def graphml(
        self,
        *,
        dataset: str | None = None,
        include_expired: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> GraphMLPage:
        """A page of the graph as a GraphML document."""
        params = self._graph_params(dataset, include_expired, limit, cursor, "graphml")
        response = self._send("GET", "/v1/gb/graph", params=params, headers={"Accept": GRAPHML_MEDIA_TYPE})
        return GraphMLPage(response.text, response.headers.get(NEXT_CURSOR_HEADER))

    # --- eval trajectories ---------------------------------------------------------------------

    def trajectory(self, trajectory_id: int) -> TrajectoryRecord:
        """The ATIF trajectory of one eval call (`"eval": true` on remember or query)."""
        return self._call(
            TrajectoryRecord, "GET", f"/v1/gb/trajectories/{int(trajectory_id)}", params=self._params()
        )

    def trajectories(
        self,
        *,
        dataset: str | None = None,
        session_id: str | None = None,
        kind: Literal["remember", "query"] | None = None,
        artifact_id: int | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TrajectoryList:
        """A page of a dataset's eval trajectories, oldest first, by session, kind or artifact
        (`trajectory_pages()` walks them all)."""
        params = self._params(
            dataset=dataset or self.dataset,
            session_id=session_id,
            kind=kind,
            artifact_id=artifact_id,
            limit=limit,
            cursor=cursor,
        )
        return self._call(TrajectoryList, "GET", "/v1/gb/trajectories", params=params)

    def trajectory_pages(
        self,
        *,
        dataset: str | None = None,
        session_id: str | None = None,
        kind: Literal["remember", "query"] | None = None,
        artifact_id: int | None = None,
        limit: int | None = None,
    ) -> Iterator[TrajectoryList]:
        return _pages(
            lambda cursor: self.trajectories(
                dataset=dataset,
                session_id=session_id,
                kind=kind,
                artifact_id=artifact_id,
                limit=limit,
                cursor=cursor,
            )
        )

    # --- forget --------------------------------------------------------------------------------

    def forget_artifact(self, artifact_id: int) -> ForgetResponse:
        """Forget a remembered text or image: its chunks, and the entities and facts only it supports."""
        return self._forget("artifacts", artifact_id)

    def forget_entity(self, entity_id: int) -> ForgetResponse:
        """Forget an entity and every fact about it."""
        return self._forget("entities", entity_id)

    def forget_edge(self, edge_id: int) -> ForgetResponse:
        """Forget one fact."""
        return self._forget("edges", edge_id)

    # --- correct and erase ---------------------------------------------------------------------

    def correct(
        self,
        edge_id: int,
        *,
        description: str | None = None,
        target: str | int | None = None,
        valid_at: datetime | str | None = None,
        invalid_at: datetime | str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = GENERATED,
    ) -> CorrectionResponse:
        """Correct a fact by hand: the values given replace the fact's (`target`: an entity's name
        or id), the old edge is expired and a new one holds the corrected fact; `invalid_at` alone
        ends the fact instead, in place. `reason` is kept with the correction. No LLM call. Retried
        safely with the Idempotency-Key (default a new random key; None sends none, no retries)."""
        body = self._body(
            description=description,
            target=target,
            valid_at=_time(valid_at),
            invalid_at=_time(invalid_at),
            reason=reason,
        )
        if idempotency_key is GENERATED:
            idempotency_key = str(uuid.uuid4())
        headers = {IDEMPOTENCY_KEY_HEADER: idempotency_key} if idempotency_key is not None else None
        response = self._send(
            "PATCH",
            f"/v1/gb/edges/{int(edge_id)}",
            json=body,
            headers=headers,
            retry=idempotency_key is not None,
        )
        return _parsed(CorrectionResponse, response)

    def erase_user(self, user_id: str | None = None) -> ErasureReceipt:
        """Erase a user (default this client's): every row of theirs, in every dataset, in one
        transaction, their queued jobs cancelled; the receipt (rows per table, jobs, when). Under
        jwt only the token's own subject. Erasing twice is no error."""
        user = user_id if user_id is not None else self.user_id
        if user is None:
            raise ValueError("erase_user needs a user_id (the client has none)")
        return _parsed(ErasureReceipt, self._send("DELETE", f"/v1/gb/users/{_segment(user)}"))

    # --- system --------------------------------------------------------------------------------

    def health(self) -> Health:
        """The database's state and the providers configured."""
        return self._call(Health, "GET", "/v1/gb/health")

    def openapi(self) -> dict[str, Any]:
        """The API's OpenAPI 3.1 document."""
        return self._send("GET", "/v1/gb/openapi.json").json()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool = False,
    ) -> Any:
        """Any route, for what the typed methods do not cover yet: the JSON body of its answer
        (`user_id` is not added). Retried like a read when `idempotent`."""
        response = self._send(method, path, params=params, json=json, headers=headers, retry=idempotent)
        return response.json() if response.content else None

    # --- the wire ------------------------------------------------------------------------------

    def _remembered(
        self, body: dict[str, Any], idempotency_key: str | None
    ) -> RememberResponse | AcceptedResponse:
        """POST /v1/gb/remember: what was stored, or the 202 of a pending artifact."""
        response = self._remember_call("/v1/gb/remember", body, idempotency_key)
        return _parsed(AcceptedResponse if response.status_code == 202 else RememberResponse, response)

    @staticmethod
    def _unless_missing(dataset: str, call: Callable[[], Model], empty: Callable[[], Model]) -> Model:
        """The call's result; `empty()` when the API says the user has no such dataset. The API keeps
        that 404 (a typo in a name is then visible); for the reads of an agent's turn it only means
        nothing has been remembered yet. Any other 404 is raised."""
        try:
            return call()
        except NotFoundError as error:
            if not error.is_missing_dataset(dataset):
                raise
            return empty()

    def _body(self, **fields: Any) -> dict[str, Any]:
        """A JSON body: the user, and the fields given (None left out: the API's default)."""
        user = {"user_id": self.user_id} if self.user_id is not None else {}
        return {**user, **{k: v for k, v in fields.items() if v is not None}}

    def _params(self, **fields: Any) -> dict[str, Any]:
        return self._body(**fields)

    def _graph_params(
        self, dataset: str | None, include_expired: bool, limit: int | None, cursor: str | None, fmt: str
    ) -> dict[str, Any]:
        return self._params(
            dataset=dataset or self.dataset,
            include_expired="true" if include_expired else None,
            limit=limit,
            cursor=cursor,
            format=fmt if fmt != "json" else None,
        )

    def _forget(self, kind: str, row_id: int) -> ForgetResponse:
        return self._call(ForgetResponse, "DELETE", f"/v1/gb/{kind}/{int(row_id)}", params=self._params())

    def _remember_call(self, path: str, body: dict[str, Any], idempotency_key: str | None) -> httpx2.Response:
        if idempotency_key is GENERATED:
            idempotency_key = str(uuid.uuid4())
        headers = {IDEMPOTENCY_KEY_HEADER: idempotency_key} if idempotency_key is not None else None
        return self._send("POST", path, json=body, headers=headers, retry=idempotency_key is not None)

    def _call(self, model: type[Model], method: str, path: str, **kwargs: Any) -> Model:
        return _parsed(model, self._send(method, path, **kwargs))

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        retry: bool | None = None,
    ) -> httpx2.Response:
        """One call, retried (when `retry`, by default for GET and DELETE and the query) on a
        retryable status or a broken connection; a connection never made is retried for any call."""
        if retry is None:
            retry = method in ("GET", "DELETE") or path == "/v1/gb/query"
        # A remember's 409 with Retry-After: the same key's first request still runs.
        retry_in_progress = retry and headers is not None and IDEMPOTENCY_KEY_HEADER in headers
        attempt = 0
        while True:
            failure: GligabaoError
            retry_after = None
            try:
                response = self._http.request(method, path, params=params, json=json, headers=headers)
            except httpx2.ConnectError as error:  # nothing was sent: any call may try again
                failure, retryable = ApiConnectionError(f"cannot reach {self.url}: {error}"), True
            except httpx2.TimeoutException as error:
                failure, retryable = ApiTimeoutError(f"{method} {path}: no answer in time ({error})"), retry
            except httpx2.TransportError as error:
                failure, retryable = ApiConnectionError(f"{method} {path}: {error}"), retry
            else:
                if response.status_code < 400:
                    return response
                failure = api_error(
                    response.status_code,
                    response.content,
                    method=method,
                    url=str(response.request.url.copy_with(query=None)),
                    headers=response.headers,
                )
                retry_after = retry_after_seconds(response.headers)
                retryable = retry and (
                    response.status_code in self.retries.statuses
                    or (retry_in_progress and response.status_code == 409 and retry_after is not None)
                )
            if not retryable or attempt >= self.retries.max_retries:
                raise failure
            self._sleep(self.retries.delay(attempt, retry_after))
            attempt += 1


def _parsed(model: type[Model], response: httpx2.Response) -> Model:
    try:
        return model.model_validate_json(response.content)
    except ValidationError as error:
        raise UnexpectedResponseError(
            f"{response.request.method} {response.request.url.path}: {response.status_code} with a body that is "
            f"not a {model.__name__}: {error.errors()[0]['msg']} at {error.errors()[0]['loc']}"
        ) from None


def _pages(fetch: Callable[[str | None], Model]) -> Iterator[Model]:
    cursor = None
    while True:
        page = fetch(cursor)
        yield page
        cursor = page.next_cursor  # type: ignore[attr-defined]
        if not cursor:
            return


def _filters(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The filters as JSON: times in RFC 3339."""
    if not filters:
        return None
    return {k: _time(v) if isinstance(v, datetime) else v for k, v in filters.items() if v is not None}


def _filter_params(filters: Mapping[str, Any] | None) -> dict[str, str]:
    """The filters as GET /v1/gb/edges takes them: lists comma-separated, metadata as JSON."""
    params: dict[str, str] = {}
    for name, value in (_filters(filters) or {}).items():
        if isinstance(value, bool):
            params[name] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            params[name] = ",".join(value)
        elif isinstance(value, Mapping):
            params[name] = json.dumps(dict(value), separators=(",", ":"))
        else:
            params[name] = str(value)
    return params


def _segment(value: str) -> str:
    """A path segment, percent-encoded whole (a session id may hold a slash)."""
    return quote(value, safe="")


def _time(value: datetime | str | None) -> str | None:
    """RFC 3339; a naive datetime is refused (the API needs an offset)."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("a datetime needs a timezone (the API takes RFC 3339 times with an offset)")
    return value.isoformat()


def _media_type(data: bytes) -> str:
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("unknown image format (png, jpeg, gif or webp): pass media_type=")
