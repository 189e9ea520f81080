"""`gligabao import FILE.jsonl`: a history of texts sent to remember in batches, resumably.

The file holds one JSON object a line: `text`, and optionally `reference_time`, `session_id` and
`metadata`. The texts are sent oldest first (by reference time, the file's order breaking ties;
one without a reference time is sent last, remembered as of its arrival), in batches of up to 100
(POST /v1/gb/remember/batch), so that the service applies the whole history in order.

- Resuming: a state file beside the input (FILE.jsonl.import.json) keeps the input's digest, how
  many texts were sent and their artifacts; a second run sends the rest. Each batch carries an
  Idempotency-Key made of its content, so a batch sent again after a crash that hid its answer is
  answered from the first send and queued once.
- `metadata` (a flat object of the caller's labels) is sent with its text and stored on its artifact.
- At the end (unless --no-wait): waits for the dataset's queue to empty, then prints the counts and
  every failed text with its line and reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from gligabao.client.memory import Memory

BATCH_MAX_TEXTS = 100  # the route's most
STATE_SUFFIX = ".import.json"
FIELDS = {"text", "reference_time", "session_id", "metadata"}


class CannotImport(Exception):
    """The input or the state file cannot be used: said to the user, nothing sent."""


@dataclass(frozen=True)
class Line:
    number: int  # in the file, from 1
    item: dict


@dataclass
class ImportState:
    """What the state file keeps between runs."""

    input_sha256: str
    dataset: str
    sent: int = 0  # texts sent, in the import's order
    artifacts: list[list[int]] = field(default_factory=list)  # [line number, artifact id] of each sent

    @classmethod
    def load(cls, path: Path, input_sha256: str, dataset: str) -> ImportState:
        if not path.exists():
            return cls(input_sha256, dataset)
        try:
            state = cls(**json.loads(path.read_text()))
        except (ValueError, TypeError) as error:
            raise CannotImport(
                f"{path}: not a state file of gligabao import ({error}); remove it to start over"
            ) from None
        if (state.input_sha256, state.dataset) != (input_sha256, dataset):
            raise CannotImport(
                f"{path}: kept for another input or dataset; remove it to import {dataset!r} from the start"
            )
        return state

    def save(self, path: Path) -> None:
        """Written whole, then renamed: a crash leaves the old state or the new one."""
        partial = path.with_suffix(path.suffix + ".partial")
        partial.write_text(json.dumps(asdict(self)))
        os.replace(partial, path)


@dataclass
class ImportReport:
    lines: int
    sent_now: int
    skipped: list[tuple[int, str]]  # lines not sent: (line number, why)
    done: int = 0
    failed: list[tuple[int, int, str]] = field(default_factory=list)  # (line, artifact id, error)
    queued: int = 0  # still queued when the run stopped waiting


def read_lines(path: Path) -> tuple[list[Line], list[tuple[int, str]]]:
    """The file's texts in the order they are sent (oldest first), and the lines that are not texts."""
    lines, skipped = [], []
    with path.open(encoding="utf-8") as file:
        for number, raw in enumerate(file, start=1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except ValueError as error:
                skipped.append((number, f"not JSON: {error}"))
                continue
            problem = _problem(item)
            if problem:
                skipped.append((number, problem))
                continue
            lines.append(Line(number, {k: v for k, v in item.items() if v is not None}))
    return sorted(lines, key=_order), skipped


def _problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return "not a JSON object"
    unknown = set(item) - FIELDS
    if unknown:
        return f"unknown fields: {', '.join(sorted(unknown))}"
    if not isinstance(item.get("text"), str) or not item["text"].strip():
        return "no text"
    for name in ("reference_time", "session_id"):
        if item.get(name) is not None and not isinstance(item[name], str):
            return f"{name} is not a string"
    if item.get("reference_time") is not None and _instant(item["reference_time"]) is None:
        return "reference_time is not an RFC 3339 time"
    if item.get("metadata") is not None and not isinstance(item["metadata"], dict):
        return "metadata is not an object"
    return None


def _instant(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _order(line: Line) -> tuple:
    moment = _instant(line.item["reference_time"]) if "reference_time" in line.item else None
    return (moment is None, moment or datetime.min.replace(tzinfo=UTC), line.number)


def import_history(
    memory: Memory,
    path: Path,
    *,
    batch_size: int = BATCH_MAX_TEXTS,
    wait: bool = True,
    timeout: float = 24 * 3600,
    progress: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ImportReport:
    """Send the file's texts not sent yet to `memory`'s dataset, then (with `wait`) wait for them."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    state_path = path.with_name(path.name + STATE_SUFFIX)
    state = ImportState.load(state_path, digest, memory.dataset)
    lines, skipped = read_lines(path)
    report = ImportReport(len(lines), 0, skipped)
    bar = ProgressBar(progress or sys.stderr, len(lines), clock)
    bar.show("sent", state.sent)
    while state.sent < len(lines):
        batch = lines[state.sent : state.sent + batch_size]
        items = [line.item for line in batch]
        accepted = memory.remember_batch(items, idempotency_key=_batch_key(memory, digest, state.sent, items))
        ids = [artifact.artifact_id for artifact in accepted.artifacts]
        state.artifacts += [[line.number, artifact_id] for line, artifact_id in zip(batch, ids, strict=True)]
        state.sent += len(batch)
        report.sent_now += len(batch)
        state.save(state_path)
        bar.show("sent", state.sent)
    bar.end()
    if wait:
        _wait_for_queue(memory, report, len(state.artifacts), timeout, bar)
        _count_outcomes(memory, state, report)
    return report


def _batch_key(memory: Memory, digest: str, start: int, items: Sequence[dict]) -> str:
    """The same batch of the same import, sent again, has the same key (at most 255 characters)."""
    content = json.dumps([memory.user_id, memory.dataset, digest, start, items], sort_keys=True)
    return "import-" + hashlib.sha256(content.encode()).hexdigest()


def _wait_for_queue(
    memory: Memory, report: ImportReport, total: int, timeout: float, bar: ProgressBar
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        summary = next((d for d in memory.datasets().datasets if d.name == memory.dataset), None)
        queued = summary.queued if summary is not None else 0
        bar.show("remembered", total - min(total, queued))
        if queued == 0 or time.monotonic() > deadline:
            report.queued = queued
            bar.end()
            return
        time.sleep(1.0)


def _count_outcomes(memory: Memory, state: ImportState, report: ImportReport) -> None:
    """Each sent text's outcome, read back: done, or failed with its reason."""
    for line_number, artifact_id in state.artifacts:
        artifact = memory.artifact(artifact_id)
        if artifact.status == "failed":
            report.failed.append((line_number, artifact_id, artifact.error or ""))
        elif artifact.status == "done":
            report.done += 1


class ProgressBar:
    """A one-line bar redrawn in place on a terminal; on anything else, a line every 10%."""

    WIDTH = 30

    def __init__(self, out: TextIO, total: int, clock: Callable[[], float]):
        self.out, self.total, self.clock = out, max(total, 1), clock
        self.started = clock()
        self.tty = getattr(out, "isatty", lambda: False)()
        self.last_tenth = -1

    def show(self, what: str, count: int) -> None:
        share = count / self.total
        filled = int(share * self.WIDTH)
        rate = count / max(self.clock() - self.started, 1e-9)
        line = f"{what:>10} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {count}/{self.total} ({rate:.1f}/s)"
        if self.tty:
            self.out.write("\r" + line)
        elif int(share * 10) != self.last_tenth:
            self.last_tenth = int(share * 10)
            self.out.write(line + "\n")
        self.out.flush()

    def end(self) -> None:
        if self.tty:
            self.out.write("\n")
        self.started, self.last_tenth = self.clock(), -1


def summary(report: ImportReport, state_path: Path) -> str:
    """What the run prints at the end."""
    lines = [
        f"texts: {report.lines}, sent now: {report.sent_now}, done: {report.done}, "
        f"failed: {len(report.failed)}, still queued: {report.queued}, lines skipped: {len(report.skipped)}"
    ]
    lines += [f"line {number}: skipped: {why}" for number, why in report.skipped]
    lines += [f"line {number}: failed (artifact {aid}): {error}" for number, aid, error in report.failed]
    lines.append(f"state: {state_path}")
    return "\n".join(lines)
