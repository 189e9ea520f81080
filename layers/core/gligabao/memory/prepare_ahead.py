"""Extracting ahead (asynchronous remember): while a job of a dataset runs, the worker extracts and
embeds the dataset's next queued texts beside it, so that their jobs only resolve and store.

A dataset's jobs run one at a time, in order (memory/async_remember.py): each resolves its facts
against what the earlier ones stored. The extract call and the embeddings request depend on nothing
stored, only on the text, its reference time and the job's options, so they can run before their
turn; the resolve call and the store cannot.
- A window at a time: a job that finds none of its dataset's queued texts prepared prepares the
  next `async_prepare_ahead` (4) at once, beside its own work, and waits for them before it ends
  (a Lambda freezes whatever still runs when the handler returns). The jobs behind it find theirs
  prepared and start none, until the window is used up.
- Only short texts (unchunked: one extract call each), and never for eval jobs, whose trajectory
  records the extraction as it happens.
- A job takes (deletes) its prepared row when it starts and uses it only when its reasoning and
  models, and the models they come to in its deployment, are the ones it was made with; otherwise
  it extracts again, as it would have. A window of texts (memory/windows.py) reads the rows of the
  texts it takes along and deletes those of the texts it stores: a text it cuts keeps its row.
- Every call made ahead is recorded in `gb_inferences`, used or not. A preparation that fails is
  logged and forgotten: the text's own job makes the calls then, with its retries.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from pydantic import ValidationError

from gligabao.ai.prompts.extract import EXTRACT_PROMPT_FINGERPRINT, Extraction
from gligabao.db import prepared as prepared_rows
from gligabao.db.prepared import PreparedRow, WaitingText
from gligabao.errors import failure_reason
from gligabao.memory.extraction import extract, merge_extractions
from gligabao.memory.job_guard import guard_of
from gligabao.memory.ports import Memory
from gligabao.memory.remember import PreparedText, embedded_strings
from gligabao.memory.remember_job import RememberJob
from gligabao.observability.inferences import CallContext, save_inferences
from gligabao.observability.logging import get_logger
from gligabao.observability.monitoring import current_report

logger = get_logger()

# A preparation ends within this many seconds (a short text's extract call takes up to ~8 s, its
# embeddings request ~1 s), or within the job's own deadline: the job waits for its preparations
# before it returns, and a slow or rate-limited provider must not hold the dataset's queue for
# the rest of the Lambda's timeout on calls that are only ahead of time.
PREPARE_SECONDS = 60.0


@dataclass
class Preparation:
    text: WaitingText
    call: CallContext  # its model calls, recorded whether or not it succeeds
    extraction: Extraction | None = None
    embedded: list[str] | None = None
    vectors: list[list[float]] | None = None


def _options(memory: Memory, job: RememberJob) -> dict:
    """What a prepared text must have been made with to be used by a job: the job's options (an
    eval job's never match: eval jobs prepare nothing), and the models they come to in this
    deployment, with the extraction prompt's fingerprint (a deploy that changes `GB_LLM_MODEL`, the
    provider, the prompt or the embeddings model during a batch leaves the texts prepared before it
    unused)."""
    llm, embedder = memory.llm, memory.embedder
    extract_model = job.models.get("extract") or getattr(llm, "default_model", "")
    return {
        **job.options(),
        "extract": f"{getattr(llm, 'provider', '')}:{extract_model}:{EXTRACT_PROMPT_FINGERPRINT}",
        "embed": f"{getattr(embedder, 'model', '')}:{getattr(embedder, 'dimensions', '')}",
    }


def prepared_options(memory: Memory, job: RememberJob) -> dict:
    """What a text prepared for `job`'s dataset is kept with (`_options`): a window keeps the texts
    it extracted and could not store (memory/windows.py) as prepared, with these."""
    return _options(memory, job)


def texts_to_prepare(
    memory: Memory, conn: psycopg.Connection, job: RememberJob, *, window: Sequence[int] = ()
) -> list[WaitingText]:
    """In the transaction that claimed the job: the texts it prepares ahead (often none). A window
    of texts (`window`: the ids of the texts it takes along, memory/windows.py) prepares the next
    window, the texts queued behind its last."""
    count = len(window) + 1 if window else memory.limits.async_prepare_ahead
    if count == 0 or job.eval:
        return []
    return prepared_rows.texts_to_prepare(
        conn,
        job.artifact_id,
        count,
        memory.limits.chunking_threshold_chars,
        job.options(),
        after=max(window, default=0),
    )


def usable(memory: Memory, row: PreparedRow | None, job: RememberJob) -> PreparedText | None:
    """The prepared text a job uses: made with its options and models, still the reply the service
    reads."""
    if row is None:
        return None
    prepared = _read(row) if row.options == _options(memory, job) else None
    logger.info(
        "remember.prepare_ahead.used" if prepared else "remember.prepare_ahead.not_used",
        extra={"artifact_id": job.artifact_id},
    )
    return prepared


def usable_along(
    memory: Memory, conn: psycopg.Connection, artifact_ids: Sequence[int], job: RememberJob
) -> dict[int, PreparedText]:
    """The prepared texts a window's job uses for the texts it takes along (memory/windows.py), by
    artifact. They stay in place: the window deletes the rows of the texts it stores, and a text
    it cuts (windows.within_reply_budget) keeps its row for the next window, which would otherwise
    extract and embed it again. A row no job here can use (other options or models) is deleted."""
    rows = prepared_rows.peek(conn, artifact_ids)
    prepared = {artifact_id: usable(memory, row, job) for artifact_id, row in rows.items()}
    unusable = [artifact_id for artifact_id, text in prepared.items() if text is None]
    if unusable:
        prepared_rows.drop(conn, unusable)
    return {artifact_id: text for artifact_id, text in prepared.items() if text is not None}


def _read(row: PreparedRow) -> PreparedText | None:
    if len(row.embedded) != len(row.vectors):
        return None
    try:
        extraction = Extraction.model_validate(row.extraction)
    except ValidationError:
        return None
    return PreparedText(extraction, dict(zip(row.embedded, row.vectors, strict=True)))


@contextmanager
def preparing(
    memory: Memory,
    texts: Sequence[WaitingText],
    job: RememberJob,
    *,
    request_id: str | None,
    deadline: float | None,
) -> Iterator[None]:
    """Prepare `texts` in threads while the block runs (the job's own work), then wait for them
    and keep what succeeded, with every call's inferences, in one transaction."""
    if not texts:
        yield
        return
    preparations = [
        Preparation(
            text,
            CallContext(
                user_id=job.user_id,
                type="remember",
                session_id=text.session_id,
                request_id=request_id,
                dataset_id=text.dataset_id,
                guard=guard_of(memory, job.user_id, text.artifact_id),
            ),
        )
        for text in texts
    ]
    # At most extract_concurrency texts at once: the provider's rate limits.
    workers = min(len(texts), memory.limits.extract_concurrency)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prepare-ahead")
    for preparation in preparations:
        pool.submit(_prepare, memory, preparation, job.reasoning, job.models, _prepare_deadline(deadline))
    try:
        yield
    finally:
        pool.shutdown(wait=True)
        _keep(memory, job.user_id, preparations, _options(memory, job))
        report = current_report()
        if report is not None:  # the job's monitoring event counts the calls made ahead
            report.more_calls.extend(p.call for p in preparations)


def _prepare_deadline(deadline: float | None) -> float:
    return min(time.monotonic() + PREPARE_SECONDS, deadline if deadline is not None else math.inf)


def _prepare(
    memory: Memory,
    preparation: Preparation,
    reasoning: Mapping[str, str],
    models: Mapping[str, str],
    deadline: float | None,
) -> None:
    text = preparation.text
    try:
        [extraction] = extract(
            memory.llm,
            preparation.call,
            [text.text],
            chunked=False,
            reference_time=text.reference_time,
            now=memory.clock(),
            reasoning=dict(reasoning),
            models=dict(models),
            concurrency=1,
            deadline=deadline,
        )
        graph = merge_extractions(
            [extraction], text.reference_time, name_max_chars=memory.limits.entity_name_max_chars
        )
        embedded = embedded_strings(graph, [])
        vectors = memory.embedder.embed(preparation.call, embedded, deadline=deadline) if embedded else []
    except Exception as exc:
        logger.warning(
            "remember.prepare_ahead.failed",
            extra={"artifact_id": text.artifact_id, "error": failure_reason(exc)},
        )
        return
    preparation.extraction, preparation.embedded, preparation.vectors = extraction, embedded, vectors


def _keep(memory: Memory, user_id: str, preparations: Sequence[Preparation], options: dict) -> None:
    """The prepared texts and the inferences of every preparation, in one transaction; when it
    fails, the inferences alone (the cost of a call is recorded whatever happens to its result)."""
    try:
        with memory.database.transaction(user_id) as uow:
            for p in preparations:
                if p.extraction is not None:
                    prepared_rows.save(
                        uow.conn, p.text, options, p.extraction.model_dump(mode="json"), p.embedded, p.vectors
                    )
                save_inferences(uow.conn, p.call)
        kept = sum(p.extraction is not None for p in preparations)
        logger.info("remember.prepare_ahead", extra={"texts": len(preparations), "prepared": kept})
        return
    except Exception as exc:
        for p in preparations:
            p.call.saved = 0
        logger.warning("remember.prepare_ahead.not_kept", extra={"error_type": type(exc).__name__})
    try:
        with memory.database.transaction(user_id) as uow:
            for p in preparations:
                save_inferences(uow.conn, p.call)
    except Exception:
        logger.warning(
            "could not record inferences", extra={"count": sum(len(p.call.inferences) for p in preparations)}
        )
