"""The run's state in its out folder, so an interrupted run resumes where it stopped.

- `run.json`: the suite's digest and the user the run remembers under (a rerun keeps both: the
  questions are asked of what the first run remembered). Against a JWT-authorized API the user is
  the token's subject, always the same: the run's datasets get a prefix of their own instead;
- `results.jsonl`: one line per finished item, appended and flushed as each ends; a rerun skips
  the items it lists (a failed one too: it was counted, unless `--retry-failed`);
- `trajectories/`: every call's trajectory, one file per item.

A line cut by a crash is ignored: its item is simply run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gligabao.timefmt import rfc3339

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
TRAJECTORIES_DIR = "trajectories"
DATASET_NAME_MAX_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class StateError(ValueError):
    """The out folder holds a run this one cannot resume (another suite)."""


def suite_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trajectory_file_name(item_id: str) -> str:
    """A file name per item id: its safe characters, and a digest that keeps two ids apart."""
    digest = hashlib.sha256(item_id.encode()).hexdigest()[:8]
    return f"{_UNSAFE.sub('_', item_id)[:80]}-{digest}.json"


class RunState:
    def __init__(self, out: Path, run: dict[str, Any], results: dict[str, dict[str, Any]]):
        self.out = out
        self.run = run
        self.results = results  # item id -> its last result
        self._lock = threading.Lock()

    @property
    def user_id(self) -> str | None:
        return self.run.get("user_id")

    def identify(self, body: dict[str, Any]) -> dict[str, Any]:
        """A request body of this run: its user (or, with JWT, its dataset prefix)."""
        prefix = self.run.get("dataset_prefix") or ""
        body = {**body, "dataset": f"{prefix}{body['dataset']}"[:DATASET_NAME_MAX_CHARS]}
        return {**body, "user_id": self.user_id} if self.user_id else body

    @classmethod
    def open(
        cls,
        out: Path,
        suite_path: Path,
        api_url: str,
        *,
        retry_failed: bool = False,
        user_per_run: bool = True,
    ) -> RunState:
        """The state of `out`: a new run, or the one to resume (same suite). `user_per_run`: the
        run names a user of its own; else (JWT: the user is the token's) a dataset prefix."""
        out.mkdir(parents=True, exist_ok=True)
        (out / TRAJECTORIES_DIR).mkdir(exist_ok=True)
        digest = suite_digest(suite_path)
        run_file = out / RUN_FILE
        if run_file.exists():
            run = json.loads(run_file.read_text())
            if run.get("suite_sha256") != digest:
                raise StateError(
                    f"{out} holds a run of another suite ({run.get('suite')}): "
                    "give another --out, or delete the folder to start over"
                )
        else:
            # One user (or dataset prefix) per run: its remembers never mix with another run's.
            tag = f"eval-{datetime.now(UTC):%Y%m%d%H%M%S}-{secrets.token_hex(3)}"
            run = {
                "suite": str(suite_path),
                "suite_sha256": digest,
                "api": api_url,
                "user_id": tag if user_per_run else None,
                "dataset_prefix": None if user_per_run else f"{tag}-",
                "started_at": rfc3339(datetime.now(UTC)),
            }
            _write_atomically(run_file, json.dumps(run, indent=2))
        results = read_results(out / RESULTS_FILE)
        if retry_failed:
            results = {item_id: result for item_id, result in results.items() if result.get("ok")}
        return cls(out, run, results)

    def done(self, item_id: str) -> bool:
        return item_id in self.results

    def record(self, result: dict[str, Any], trajectory: dict[str, Any] | None) -> None:
        """Keeps an item's result (and its trajectory) before the next item starts."""
        if trajectory is not None:
            name = trajectory_file_name(result["id"])
            _write_atomically(self.out / TRAJECTORIES_DIR / name, json.dumps(trajectory, indent=2))
            result = {**result, "trajectory_file": f"{TRAJECTORIES_DIR}/{name}"}
        line = json.dumps(result, ensure_ascii=False) + "\n"
        with self._lock:
            with (self.out / RESULTS_FILE).open("a", encoding="utf-8") as results:
                results.write(line)
                results.flush()
                os.fsync(results.fileno())
            self.results[result["id"]] = result


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return results
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue  # cut by a crash: the item runs again
        if isinstance(result, dict) and isinstance(result.get("id"), str):
            results[result["id"]] = result
    return results


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
