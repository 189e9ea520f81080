"""`gligabao import FILE.jsonl`: a history of texts sent to remember in batches, resumably.

The file holds one JSON object a line: `text`, and optionally `reference_time`, `session_id` and
`metadata`. Each line is checked with the batch route's own model of a text (BatchText): a line
it refuses is skipped and listed at the end with its line number and why. The texts are sent
oldest first (by reference time, the file's order breaking ties; one without a reference time is
sent last, remembered as of its arrival), in batches (POST /v1/gb/remember/batch) of up to 100
texts and of less JSON than the route's body limit, so that the service applies the whole
history in order.

- A batch the API still refuses (400, or 413 for its size) is halved until the refused text stands
  alone: that text is skipped and listed, the others are sent.
- Resuming: a state file beside the input (FILE.jsonl.import.json) keeps, for each API, user and
  dataset the file was imported into, the input's digest, how far the import went, each sent
  text's artifact and each refused text's reason; a second run into the same dataset sends the
  rest, a run into another dataset starts its own. Each batch carries an Idempotency-Key made of
  its content, so a batch sent again after a crash that hid its answer is answered from the first
  send and queued once.
- `metadata` (a flat object of the caller's labels) is sent with its text and stored on its artifact.
- At the end (unless --no-wait): waits for the dataset's queue to empty, then prints the counts and
  every skipped line and failed text with its line and reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from gligabao.api.remember_models import BatchText
from gligabao.api.validation import check_dataset_name, session_id_within
from gligabao.client.errors import ApiError, BadRequestError, PayloadTooLargeError
from gligabao.client.memory import Memory
from gligabao.limits import DEFAULT_LIMITS

BATCH_MAX_TEXTS = DEFAULT_LIMITS.batch_remember_max_texts  # the route's most (100)
# The route's body limit (1 MiB), less room for the envelope around the texts: {"user_id": ...,
# "texts": [...], "dataset": ...}, a user id of at most 256 bytes even when escaped.
ENVELOPE_MARGIN_BYTES = 16 * 1024
BATCH_MAX_TEXTS_BYTES = DEFAULT_LIMITS.remember_max_body_bytes - ENVELOPE_MARGIN_BYTES
SESSION_ID_MAX_BYTES = DEFAULT_LIMITS.session_id_max_bytes
# A refusal naming these is about the request, not one of its texts: every batch would get it.
REQUEST_FIELDS = ("user_id", "dataset")
STATE_SUFFIX = ".import.json"


class CannotImport(Exception):
    """The input, the target or the state file cannot be used: said to the user, nothing sent."""


class Unusable(Exception):
    """A line that cannot be sent; its message says why."""


@dataclass(frozen=True)
class Line:
    number: int  # in the file, from 1
    item: dict  # as sent: the line's fields, nulls left out
    reference_time: datetime | None
    size: int  # bytes of the item's JSON in the request body


@dataclass(frozen=True)
class ImportTarget:
    """Where a file is imported: one state per API, user and dataset."""

    api: str
    user_id: str | None  # None: the token's subject
    dataset: str

    @classmethod
    def of(cls, memory: Memory) -> ImportTarget:
        return cls(memory.url, memory.user_id, memory.dataset)

    def holds(self, entry: dict) -> bool:
        return (entry.get("api"), entry.get("user_id"), entry.get("dataset")) == (
            self.api,
            self.user_id,
            self.dataset,
        )


@dataclass
class ImportState:
    """What the state file keeps of one import between runs."""

    api: str
    user_id: str | None
    dataset: str
    input_sha256: str
    handled: int = 0  # texts of the import's order sent, or refused by the API
    artifacts: list[list[int]] = field(default_factory=list)  # [line number, artifact id] of each sent
    refused: list[list[Any]] = field(default_factory=list)  # [line number, why] of each the API refused
    # A half of a refused batch being sent: [handled, sending_until) is sent first on the next run,
    # so that its Idempotency-Key is the same if the crash came after the API took it.
    sending_until: int | None = None

    def accepted(self, batch: Sequence[Line], artifact_ids: Sequence[int]) -> None:
        self.artifacts += [[line.number, aid] for line, aid in zip(batch, artifact_ids, strict=True)]
        self._advance(len(batch))

    def refused_line(self, line: Line, why: str) -> None:
        self.refused.append([line.number, why])
        self._advance(1)

    def _advance(self, texts: int) -> None:
        self.handled += texts
        self.sending_until = None


class StateFile:
    """FILE.jsonl.import.json: the state of each import of the file, one per ImportTarget."""

    def __init__(self, path: Path):
        self.path = path

    def load(self, target: ImportTarget, input_sha256: str) -> ImportState:
        entry = next((entry for entry in self._entries(target) if target.holds(entry)), None)
        if entry is None:
            return ImportState(target.api, target.user_id, target.dataset, input_sha256)
        try:
            state = ImportState(**entry)
        except TypeError as error:
            raise self._unreadable(error) from None
        if state.input_sha256 != input_sha256:
            raise CannotImport(
                f"{self.path}: kept for another version of the file (it changed since it was imported "
                f"into {target.dataset!r}); remove the state file to import it from the start"
            )
        return state

    def save(self, state: ImportState) -> None:
        """The other imports' entries as the file holds them now (another run may be writing one),
        with this one's; written whole, then renamed: a crash leaves the old state or the new one."""
        target = ImportTarget(state.api, state.user_id, state.dataset)
        entries = [entry for entry in self._entries(target) if not target.holds(entry)]
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps({"imports": [*entries, asdict(state)]}))
        os.replace(partial, self.path)

    def _entries(self, target: ImportTarget) -> list[dict]:
        if not self.path.exists():
            return []
        try:
            kept = json.loads(self.path.read_text())
        except ValueError as error:
            raise self._unreadable(error) from None
        if isinstance(kept, dict) and "input_sha256" in kept:  # an older import's: one dataset's
            return [_migrated(kept, target)]
        if not isinstance(kept, dict) or not isinstance(kept.get("imports"), list):
            raise self._unreadable("no list of imports")
        return kept["imports"]

    def _unreadable(self, error: object) -> CannotImport:
        return CannotImport(
            f"{self.path}: not a state file of gligabao import ({error}); remove it to start over"
        )


def _migrated(old: dict, target: ImportTarget) -> dict:
    """A state file of one dataset (before imports were kept per dataset): made by this API and user."""
    return {
        "api": target.api,
        "user_id": target.user_id,
        "dataset": old.get("dataset"),
        "input_sha256": old.get("input_sha256"),
        "handled": old.get("sent", 0),
        "artifacts": old.get("artifacts", []),
    }


@dataclass
class ImportReport:
    lines: int  # texts to send: the lines that are texts the API takes
    sent_now: int
    skipped: list[tuple[int, str]]  # lines not sent: (line number, why)
    done: int = 0
    failed: list[tuple[int, int, str]] = field(default_factory=list)  # (line, artifact id, error)
    queued: int = 0  # still queued when the run stopped waiting


def read_lines(path: Path) -> tuple[list[Line], list[tuple[int, str]]]:
    """The file's texts in the order they are sent (oldest first), and the lines that are not
    texts the API takes, with why."""
    lines, skipped = [], []
    with path.open("rb") as file:  # read as bytes: a line that is not UTF-8 is skipped, not fatal
        for number, raw in enumerate(file, start=1):
            if not raw.strip():
                continue
            try:
                lines.append(_line(number, raw))
            except Unusable as why:
                skipped.append((number, str(why)))
    return sorted(lines, key=_order), skipped


def _line(number: int, raw: bytes) -> Line:
    """The line as the batch route takes a text, or Unusable saying why it would refuse it."""
    item = {name: value for name, value in _json_object(number, raw).items() if value is not None}
    text = _validated(item)
    size = _json_size(item)
    if size + 1 > BATCH_MAX_TEXTS_BYTES:  # + 1: the comma between two texts
        raise Unusable(f"too large for a batch: {size} bytes of JSON, at most {BATCH_MAX_TEXTS_BYTES - 1}")
    return Line(number, item, text.reference_time, size)


def _json_object(number: int, raw: bytes) -> dict:
    try:
        item = json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
    except UnicodeDecodeError:
        raise Unusable("not UTF-8") from None
    except json.JSONDecodeError as error:  # its line is always 1: the column says where
        raise Unusable(f"not JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise Unusable("not JSON the API reads (nested too deeply)") from None
    if not isinstance(item, dict):
        raise Unusable("not a JSON object")
    return item


def _validated(item: dict) -> BatchText:
    """The item read by the route's own model: what it refuses, the route would refuse (400). But
    for a session id's content: the model checks it against the server's limits, which it loads
    from the server's code (absent from a client-only install); the same rule is checked here
    against the default limits."""
    session_problem = _session_id_problem(item.get("session_id"))
    blanked = {**item, "session_id": ""} if isinstance(item.get("session_id"), str) else item
    try:
        text = BatchText.model_validate(blanked)
    except ValidationError as error:
        raise Unusable(_reasons(error, session_problem)) from None
    except ArithmeticError:  # a number too large for a float, in metadata
        raise Unusable("metadata: a number too large") from None
    if session_problem:
        raise Unusable(session_problem)
    return text


def _session_id_problem(value: object) -> str | None:
    """The API's rule for a session id (api.validation.session_id_within), at the default limit."""
    if not isinstance(value, str):  # none, or not a string: the model says so
        return None
    try:
        session_id_within(value, SESSION_ID_MAX_BYTES)
    except ValueError as error:
        return str(error)
    return None


def _reasons(error: ValidationError, also: str | None = None) -> str:
    """Each problem found, by field: a missing text says so, unknown fields come last."""
    said, unknown = [], []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"])
        if problem["type"] == "extra_forbidden":
            unknown.append(where)
        elif problem["type"] == "missing":
            said.append(f"{where} is missing")
        else:
            message = problem["msg"].removeprefix("Value error, ")
            said.append(message if message.startswith(where) else f"{where}: {message}")
    if also:
        said.append(also)
    if unknown:
        said.append(f"unknown fields: {', '.join(sorted(unknown))}")
    return "; ".join(said)


def _json_size(item: dict) -> int:
    """The bytes the client sends of the item: compact JSON, UTF-8 (the client's encoding)."""
    try:
        return len(json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode())
    except UnicodeEncodeError:
        raise Unusable("holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text") from None


def _order(line: Line) -> tuple:
    moment = line.reference_time
    return (moment is None, moment or datetime.min.replace(tzinfo=UTC), line.number)


def check_target(memory: Memory) -> None:
    """A dataset the API refuses would have every batch refused: said once, nothing sent. (A user
    id's rule reads the server's limits: the API's refusal of it stops the import, REQUEST_FIELDS.)"""
    try:
        check_dataset_name(memory.dataset)
    except ValueError as error:
        raise CannotImport(str(error)) from None


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
    check_target(memory)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    store = StateFile(path.with_name(path.name + STATE_SUFFIX))
    state = store.load(ImportTarget.of(memory), digest)
    lines, skipped = read_lines(path)
    report = ImportReport(len(lines), 0, skipped)
    bar = ProgressBar(progress or sys.stderr, len(lines), clock)
    sender = BatchSender(memory, digest, lines, state, store, report, bar)
    bar.show("sent", state.handled)
    while state.handled < len(lines):
        sender.send(state.handled, sender.next_end(batch_size))
    bar.end()
    report.skipped = sorted([*skipped, *((number, why) for number, why in state.refused)])
    if wait:
        _wait_for_queue(memory, report, len(state.artifacts), timeout, bar)
        _count_outcomes(memory, state, report)
    return report


@dataclass
class BatchSender:
    """Sends the texts from where the state says, batch by batch, saving the state after each."""

    memory: Memory
    digest: str
    lines: list[Line]
    state: ImportState
    store: StateFile
    report: ImportReport
    bar: ProgressBar

    def next_end(self, batch_size: int) -> int:
        """Where the next batch ends: a half in flight when the last run stopped, else as many texts
        as fit in a batch by count and by bytes."""
        start = self.state.handled
        if self.state.sending_until is not None and self.state.sending_until > start:
            return self.state.sending_until
        end, size = start, 0
        while end < len(self.lines) and end - start < batch_size:
            size += self.lines[end].size + 1  # + 1: the comma after it
            if size > BATCH_MAX_TEXTS_BYTES:
                break
            end += 1
        return max(end, start + 1)  # a text alone always fits (read_lines skips a larger one)

    def send(self, start: int, end: int) -> None:
        batch = self.lines[start:end]
        items = [line.item for line in batch]
        key = _batch_key(self.memory, self.digest, start, items)
        try:
            accepted = self.memory.remember_batch(items, idempotency_key=key)
        except (BadRequestError, PayloadTooLargeError) as refusal:  # for a text of it, or its size
            self._refused(start, end, refusal)
            return
        self.state.accepted(batch, [artifact.artifact_id for artifact in accepted.artifacts])
        self.report.sent_now += len(batch)
        self._saved()

    def _refused(self, start: int, end: int, refusal: ApiError) -> None:
        """Halved until the refused text stands alone: it is skipped, the others sent. A refusal of
        the request itself (its user) stops the import: no text of it would be taken."""
        if refusal.status == 400 and refusal.error.startswith(REQUEST_FIELDS):
            raise refusal
        if end - start == 1:
            self.state.refused_line(self.lines[start], _refusal_reason(refusal))
            self._saved()
            return
        middle = (start + end) // 2
        for low, high in ((start, middle), (middle, end)):
            self.state.sending_until = high
            self.store.save(self.state)
            self.send(low, high)

    def _saved(self) -> None:
        self.store.save(self.state)
        self.bar.show("sent", self.state.handled)


def _refusal_reason(refusal: ApiError) -> str:
    """The API's reason, without the text's place in a batch of one ("texts.0.") nor the field
    named twice ("reference_time: reference_time must be...")."""
    reason = re.sub(r"^texts(?:\.0|\[0\])\.", "", refusal.error)
    where, _, message = reason.partition(": ")
    return f"refused by the API ({refusal.status}): {message if message.startswith(where) else reason}"


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
    """A one-line bar redrawn in place on a terminal; on anything else, a line every 10%. Its rate
    is this run's: what was counted since the bar started, not what an earlier run did."""

    WIDTH = 30

    def __init__(self, out: TextIO, total: int, clock: Callable[[], float]):
        self.out, self.total, self.clock = out, max(total, 1), clock
        self.tty = getattr(out, "isatty", lambda: False)()
        self._restart()

    def show(self, what: str, count: int) -> None:
        if self.first_count is None:
            self.first_count = count
        share = count / self.total
        filled = int(share * self.WIDTH)
        line = f"{what:>10} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {count}/{self.total}{self._rate(count)}"
        if self.tty:
            self.out.write("\r" + line)
        elif int(share * 10) != self.last_tenth:
            self.last_tenth = int(share * 10)
            self.out.write(line + "\n")
        self.out.flush()

    def _rate(self, count: int) -> str:
        """Nothing until this run has counted something (a rerun with all sent says no rate)."""
        counted, elapsed = count - (self.first_count or 0), self.clock() - self.started
        return f" ({counted / elapsed:.1f}/s)" if counted > 0 and elapsed > 0 else ""

    def end(self) -> None:
        if self.tty:
            self.out.write("\n")
        self._restart()

    def _restart(self) -> None:
        self.started, self.last_tenth = self.clock(), -1
        self.first_count: int | None = None


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
