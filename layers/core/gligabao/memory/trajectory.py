"""The ATIF trajectory of an eval call (SPEC section 10, ATIF.md): what each stage of a remember or a
query took in, gave out and how long it took, and every model call with its model, reasoning level,
tokens and cost.

A call that is not an eval call gets NO_TRAJECTORY, whose methods do nothing: the pipeline's stage
lines cost it one method call each and it stores nothing. An eval call gets a TrajectoryRecorder:
each stage line adds a `system` step (its inputs, outputs and duration in `extra`), the model calls
come from the call's CallContext (observability/inferences.py) as `agent` steps after the stage that
made them, and `save_*` writes the trajectory into the call's own transaction (db/trajectories.py)
and returns it.

Durations are measured in the process with time.perf_counter(): a stage's is the time since the
previous stage line (the first: since the call began). The query's retrieval after the keyword
search is one SQL statement (vector searches, expansion and passages together): its time is the
`search_vectors` step's, and `expand` and `passages` report what they produced with a null duration.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gligabao import __version__
from gligabao.db import trajectories as trajectory_rows
from gligabao.observability.inferences import CallContext, Inference, total_cost_usd

if TYPE_CHECKING:
    import psycopg

    from gligabao.limits import Limits
    from gligabao.memory.evidence import Evidence
    from gligabao.memory.extraction import TextGraph
    from gligabao.memory.fact_resolution import Judgement
    from gligabao.memory.ports import Memory
    from gligabao.memory.retrieval import Context

SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "gligabao"
# The request's fields never copied into a trajectory: when the call must end, its HTTP request id.
_NOT_INPUT = frozenset({"deadline", "request_id", "limits", "with_series"})  # the server's, not asked
# Which stage's model calls follow which step; the others (query, detect_geo) come after every stage.
_CALLS_OF_STAGE = {"extraction": ("extract", "image"), "embedding": ("embed",), "resolution": ("resolve",)}
_QUERY_CALLS_OF_STAGE = {"search_vectors": ("embed",)}
SINGLE_STATEMENT_NOTE = (
    "The retrieval after the keyword search is one SQL statement: the vector searches, the "
    "expansion and the passages. Its time is the search_vectors step's; expand and passages show "
    "what they produced, with a null duration (not measurable apart)."
)


MEASURED = object()  # a stage's duration: the time since the previous stage


class NoTrajectory:
    """Not an eval call: records nothing, stores nothing."""

    enabled = False

    def stage(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def chunking(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def extraction(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def embedding(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def resolution(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def retrieval(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def save_remember(self, _conn: Any, _dataset_id: int, remembered: Any) -> Any:
        return remembered

    def save_repeated(self, _memory: Any, _user_id: str, remembered: Any) -> Any:
        return remembered

    def save_query(self, *_args: Any, **_kwargs: Any) -> None:
        return None


NO_TRAJECTORY = NoTrajectory()


@dataclass
class _Stage:
    name: str
    started: datetime
    duration_ms: float | None
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    note: str | None = None
    calls: tuple[str, ...] = ()  # the inference stages whose calls follow this step


@dataclass
class TrajectoryRecorder:
    """The trajectory of one eval call, built as the call runs."""

    kind: str  # 'remember' or 'query'
    call: CallContext
    request: dict[str, Any]  # the request, as JSON (extra.input)
    message: str  # the user step's: the text to remember, or the question
    enabled = True
    stages: list[_Stage] = field(default_factory=list)
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _started: float = field(default_factory=time.perf_counter)
    _last: float = 0.0
    _stored_output: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self._last = self._started

    # --- stages -------------------------------------------------------------------------------

    def stage(
        self,
        name: str,
        *,
        inputs: Mapping[str, Any] | None = None,
        outputs: Mapping[str, Any] | None = None,
        duration_ms: float | object | None = MEASURED,
        note: str | None = None,
        calls: Sequence[str] = (),
        began: float | None = None,
    ) -> None:
        """A system step; its duration is the time since the previous stage unless given (None:
        not measurable apart); it began at the end of the previous stage unless `began` (a
        time.perf_counter() instant) says otherwise."""
        now = time.perf_counter()
        measured = _ms(now - self._last)
        self.stages.append(
            _Stage(
                name,
                self.started_at + timedelta(seconds=(self._last if began is None else began) - self._started),
                measured if duration_ms is MEASURED else duration_ms,
                dict(inputs or {}),
                dict(outputs or {}),
                note,
                tuple(calls),
            )
        )
        self._last = now

    def chunking(self, text: str, chunks: Sequence[str], limits: Limits) -> None:
        self.stage(
            "chunking",
            inputs={"chars": len(text), "threshold_chars": limits.chunking_threshold_chars},
            outputs={"chunks": len(chunks), "chunk_chars": [len(chunk) for chunk in chunks]},
        )

    def extraction(self, graph: TextGraph) -> None:
        self.stage(
            "extraction",
            inputs={"pieces": max(1, len(graph.summaries))},
            outputs={
                "entities": [_text_entity(e) for e in graph.entities],
                "facts": [_text_fact(f) for f in graph.facts],
                "summaries": len([s for s in graph.summaries if s]),
            },
            calls=_CALLS_OF_STAGE["extraction"],
        )

    def embedding(self, vectors: Any) -> None:
        counts = {name: len(getattr(vectors, name)) for name in ("entities", "facts", "chunks")}
        counts["summaries"] = len([v for v in vectors.summaries if v is not None])
        dimensions = next(
            (len(v) for group in (vectors.entities, vectors.facts, vectors.chunks) for v in group), 0
        )
        self.stage(
            "embedding",
            inputs={"texts": counts},
            outputs={"vectors": sum(counts.values()), "dimensions": dimensions},
            note="each distinct string is embedded once, in one request",
            calls=_CALLS_OF_STAGE["embedding"],
        )

    def resolution(self, graph: TextGraph, judgement: Judgement, places: Mapping[str, Any] | None) -> None:
        self.stage(
            "resolution",
            inputs={"facts": len(graph.facts)},
            outputs={
                "duplicates": [
                    {"fact": _text_fact(graph.facts[i]), "edge_id": edge}
                    for i, edge in sorted(judgement.duplicate_of.items())
                ],
                "contradictions": [
                    {"fact": _text_fact(graph.facts[i]), "edge_ids": sorted(edges)}
                    for i, edges in sorted(judgement.contradicts.items())
                ],
                "places_located": sorted(places or {}),
            },
            note="the resolve stage judges the new facts against the live ones around them; entities are "
            "matched to stored ones (name or cosine) in the storage transaction",
            calls=_CALLS_OF_STAGE["resolution"],
        )

    def retrieval(self, question: str, context: Context, limits: Limits) -> None:
        """The query's retrieval as steps: keyword seeds, vector search, expansion, passages (and the
        ranking of the context, when ranked). The steps after search_vectors show the context kept."""
        from gligabao.memory.retrieval import query_terms

        began, ended = self._last, time.perf_counter()
        total = _ms(ended - began)
        timings = context.timings_ms
        statement_began = ended - (timings.get("search_vectors") or 0) / 1000
        names = {entity.id: entity.name for entity in context.entities}
        similar = set(context.similar_edges)
        self.stage(
            "keyword_seeds",
            inputs={"terms": query_terms(question, limits), "limit": limits.keyword_seeds},
            outputs={"seeds": [_named(i, names) for i in context.keyword_seeds]},
            duration_ms=timings.get("keyword_seeds"),
            began=began,
        )
        self.stage(
            "search_vectors",
            inputs={
                "similarity_threshold": limits.similarity_threshold,
                "limits": {
                    "entities": limits.similar_entities,
                    "edges": limits.similar_edges,
                    "chunks": limits.similar_chunks,
                    "summaries": limits.similar_summaries,
                },
            },
            outputs={
                "similarity_seeds": [_named(i, names) for i in context.similarity_seeds],
                "similar_edges": [_edge(e) for e in context.edges if e.id in similar],
                "fallback": context.fallback,
                "search_paths": dict(context.search_paths),
            },
            duration_ms=timings.get("search_vectors"),
            note=f"{SINGLE_STATEMENT_NOTE} The retrieval took {total} ms in all, waiting for the "
            "question's embedding included.",
            calls=_QUERY_CALLS_OF_STAGE["search_vectors"],
            began=statement_began,
        )
        self.stage(
            "expand",
            inputs={
                "seeds": len(context.keyword_seeds) + len(context.similarity_seeds),
                "limit": limits.expansion_edges,
            },
            outputs={
                "edges": [_edge(e) for e in context.edges if e.id not in similar],
                "entities": len(context.entities),
            },
            duration_ms=None,
            note="computed in the search_vectors statement",
            began=statement_began,
        )
        self.stage(
            "passages",
            inputs={"with_text": limits.passages_with_text, "summary_only": limits.passages_summary_only},
            outputs={
                "passages": [
                    {
                        "artifact_id": p.artifact_id,
                        "parent_id": p.parent_id,
                        "index": p.index,
                        "with_text": p.text is not None,
                        "summary": p.summary,
                    }
                    for p in context.passages
                ]
            },
            duration_ms=None,
            note="computed in the search_vectors statement",
            began=statement_began,
        )
        candidates = getattr(context, "candidates", None)
        if candidates:  # the ranked context (GB_RETRIEVAL=ranked): the most relevant candidates kept
            self.stage(
                "rank",
                inputs={"candidates": dict(candidates)},
                outputs={
                    "kept": {
                        "entities": len(context.entities),
                        "edges": len(context.edges),
                        "passages": len(context.passages),
                    }
                },
                duration_ms=None,
                note="ranked in the process after the statement; its time is within the retrieval's total",
                began=ended,
            )

    # --- saving -------------------------------------------------------------------------------

    def save_remember(self, conn: psycopg.Connection, dataset_id: int, remembered: Any) -> Any:
        """The storage step, then the trajectory into the caller's transaction; `remembered` with it."""
        self.stage(
            "storage",
            inputs={"dataset": remembered.dataset},
            outputs={
                "artifact_id": remembered.artifact_id,
                "chunks": remembered.chunks,
                "entities": [
                    {"id": e.id, "name": e.name, "type": e.type, "created": e.created}
                    for e in remembered.entities
                ],
                "edges": [{**_edge(e), "created": e.created} for e in remembered.edges],
                "superseded": [e.id for e in remembered.superseded],
            },
            note="one transaction: the artifact and its chunks, entity matching, facts, supersession, links",
        )
        summary = (
            f"Stored artifact {remembered.artifact_id}: entities {len(remembered.entities)} "
            f"({sum(e.created for e in remembered.entities)} new), facts {len(remembered.edges)} "
            f"({sum(e.created for e in remembered.edges)} new), superseded {len(remembered.superseded)}."
        )
        trajectory = self.build(final=summary, extra={"artifact_id": remembered.artifact_id})
        self._insert(conn, dataset_id, trajectory)
        return replace(remembered, trajectory=trajectory)

    def save_repeated(self, memory: Memory, user_id: str, remembered: Any) -> Any:
        """An image the dataset holds: answered from its first remember, no model call, nothing
        stored but this trajectory (in a transaction of its own)."""
        self.stage(
            "lookup",
            inputs={"sha256": "of the image"},
            outputs={"repeated": True, "artifact_id": remembered.artifact_id},
            note="the dataset holds this image: its first remember is the answer",
        )
        trajectory = self.build(
            final=f"Repeated image: artifact {remembered.artifact_id}, stored before.",
            extra={"artifact_id": remembered.artifact_id, "repeated": True},
        )
        with memory.database.transaction(user_id, remembered.dataset) as uow:
            if uow.dataset_id is not None:
                self._insert(uow.conn, uow.dataset_id, trajectory)
        return replace(remembered, trajectory=trajectory)

    def save_query(
        self, conn: psycopg.Connection, dataset_id: int, answer: str, evidence: Evidence
    ) -> dict[str, Any]:
        cited = {
            "entities": [e.id for e in evidence.entities],
            "edges": [e.id for e in evidence.edges],
            "passages": [p.artifact_id for p in evidence.passages],
        }
        trajectory = self.build(final=answer, final_stage="query", final_extra={"evidence": cited})
        self._insert(conn, dataset_id, trajectory)
        return trajectory

    def _insert(self, conn: psycopg.Connection, dataset_id: int, trajectory: dict[str, Any]) -> None:
        trajectory_id = trajectory_rows.insert_trajectory(
            conn,
            dataset_id=dataset_id,
            session_id=self.call.session_id,
            kind=self.kind,
            trajectory=trajectory,
        )
        trajectory["trajectory_id"] = str(trajectory_id)
        if trajectory["session_id"] is None:
            trajectory["session_id"] = str(trajectory_id)

    # --- the ATIF document --------------------------------------------------------------------

    def build(
        self,
        *,
        final: str,
        final_stage: str | None = None,
        final_extra: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The trajectory: the user step, each stage followed by its model calls, the other model
        calls in the order they ended, and the final agent step (the answer, or what was stored).
        With `final_stage`, the last call of that stage is the final step (it carries the answer);
        without such a call, the final step is an agent step with no model call."""
        inferences = list(self.call.inferences)
        steps: list[dict[str, Any]] = [
            {"source": "user", "timestamp": _iso(self.started_at), "message": self.message}
        ]
        placed: set[int] = set()
        for stage in self.stages:
            steps.append(_system_step(stage))
            for index, inference in enumerate(inferences):
                if index not in placed and inference.stage in stage.calls:
                    placed.add(index)
                    steps.append(_agent_step(inference))
        rest = [i for i in range(len(inferences)) if i not in placed]
        answering = next(
            (
                i
                for i in reversed(rest)
                if final_stage and inferences[i].stage == final_stage and inferences[i].ok
            ),
            None,
        )
        steps.extend(_agent_step(inferences[i]) for i in rest if i != answering)
        if answering is not None:
            steps.append(_agent_step(inferences[answering], message=final, extra=final_extra))
        else:
            steps.append(
                {
                    "source": "agent",
                    "message": final,
                    "llm_call_count": 0,
                    "extra": {"stage": final_stage or "stored", **(final_extra or {})},
                }
            )
        for number, step in enumerate(steps, start=1):
            step["step_id"] = number
        llm_models = [i.model for i in inferences if i.reasoning is not None]
        return {
            "schema_version": SCHEMA_VERSION,
            "session_id": self.call.session_id,  # the trajectory's own id when None (set when stored)
            "trajectory_id": None,
            "agent": _without_none(
                {
                    "name": AGENT_NAME,
                    "version": __version__,
                    "model_name": llm_models[0] if llm_models else None,
                }
            ),
            "steps": [_without_none(step) for step in steps],
            "notes": SINGLE_STATEMENT_NOTE if self.kind == "query" else None,
            "final_metrics": _final_metrics(inferences, len(steps), _ms(time.perf_counter() - self._started)),
            "extra": {
                "kind": self.kind,
                "dataset": self.request.get("dataset"),
                "request_id": self.call.request_id,
                "started_at": _iso(self.started_at),
                "input": self.request,
                **(extra or {}),
            },
        }


def recorder_for(
    kind: str, call: CallContext, request: Any, message: str
) -> TrajectoryRecorder | NoTrajectory:
    """The recorder of an eval call (`request.eval`), else NO_TRAJECTORY."""
    if not getattr(request, "eval", False):
        return NO_TRAJECTORY
    call.eval = True
    return TrajectoryRecorder(kind, call, request_input(request), message)


def request_input(request: Any) -> dict[str, Any]:
    """The request as JSON: its fields as given (times in RFC 3339), nothing the server added."""
    fields = asdict(request) if is_dataclass(request) else dict(request)
    return {name: _json(value) for name, value in fields.items() if name not in _NOT_INPUT}


# --- steps ------------------------------------------------------------------------------------


def _system_step(stage: _Stage) -> dict[str, Any]:
    return {
        "source": "system",
        "timestamp": _iso(stage.started),
        "message": stage.name,
        "extra": {
            "stage": stage.name,
            "inputs": stage.inputs,
            "outputs": stage.outputs,
            "duration_ms": stage.duration_ms,  # null: not measurable apart (see note)
            **({"note": stage.note} if stage.note else {}),
        },
    }


def _agent_step(
    inference: Inference, *, message: str | None = None, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    metrics = _without_none(
        {
            "prompt_tokens": inference.input_tokens,
            "completion_tokens": inference.output_tokens,
            "cached_tokens": inference.cached_tokens,
            "cost_usd": inference.cost_usd,
            "extra": {"thinking_tokens": inference.thinking_tokens}
            if inference.thinking_tokens is not None
            else None,
        }
    )
    return {
        "source": "agent",
        "message": message if message is not None else (inference.error or ""),
        "model_name": inference.model,
        "reasoning_effort": inference.reasoning,
        "llm_call_count": 1,
        "metrics": metrics,
        "extra": _without_none(
            {
                "stage": inference.stage,
                "duration_ms": inference.duration_ms,
                "ok": inference.ok,
                "error": inference.error,
                **(extra or {}),
            }
        ),
    }


def _final_metrics(inferences: Sequence[Inference], steps: int, duration_ms: float) -> dict[str, Any]:
    return {
        "total_prompt_tokens": sum(i.input_tokens or 0 for i in inferences),
        "total_completion_tokens": sum(i.output_tokens or 0 for i in inferences),
        "total_cached_tokens": sum(i.cached_tokens or 0 for i in inferences),
        "total_cost_usd": total_cost_usd(inferences),  # None (left out) when a call was unpriced
        "total_steps": steps,
        "extra": {
            "duration_ms": duration_ms,
            "llm_calls": sum(1 for i in inferences if i.reasoning is not None),
            "embedding_calls": sum(1 for i in inferences if i.reasoning is None),
            "failed_calls": sum(1 for i in inferences if not i.ok),
            "thinking_tokens": sum(i.thinking_tokens or 0 for i in inferences),
        },
    }


# --- small helpers ----------------------------------------------------------------------------


def _text_entity(entity: Any) -> dict[str, Any]:
    return {"name": entity.name, "type": entity.type, "description": entity.description}


def _text_fact(fact: Any) -> dict[str, Any]:
    return _without_none(
        {
            "source": fact.source.name,
            "relation": fact.relation,
            "target": fact.target.name,
            "valid_at": _iso(fact.valid_at),
            "invalid_at": _iso(fact.invalid_at),
        }
    )


def _edge(edge: Any) -> dict[str, Any]:
    return {"id": edge.id, "source": edge.source, "relation": edge.relation, "target": edge.target}


def _named(entity_id: int, names: Mapping[int, str]) -> dict[str, Any]:
    return {"id": entity_id, "name": names.get(entity_id, "")}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": len(value)}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return [_json(v) for v in value]
    return value


def _without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
