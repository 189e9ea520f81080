"""`gligabao import FILE.jsonl` against the local API: a history sent in batches through the
client, oldest first, with a progress bar on stderr; resumed where it stopped; counts and failures
printed at the end."""

from __future__ import annotations

import json

import pytest
from bulk_helpers import graph_rows

from gligabao.client.memory import Memory
from gligabao.local.cli import main

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Quito", "Cairo"]


def write_history(path, lines: list) -> None:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


def moves() -> list[dict]:
    """Alice's moves, newest first in the file, with a session and metadata each."""
    said = [
        {
            "text": f"Alice lives in {city}.",
            "reference_time": f"{2010 + i}-01-01T00:00:00Z",
            "session_id": f"s{i}",
            "metadata": {"source": "chat"},
        }
        for i, city in enumerate(CITIES)
    ]
    return list(reversed(said))


def run_import(api, path, *more: str) -> int:
    return main(
        ["import", str(path), "--api", api.base_url, "--user-id", "u1", "--dataset", "history", *more]
    )


def live_city(db) -> list[str]:
    return [row[0].split(" ")[2] for row in graph_rows(db, "history")["edges"] if row[3] is None]


def test_a_history_is_imported_oldest_first_in_batches_with_a_progress_bar_and_counts(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())

    code = run_import(api, path, "--batch-size", "3")

    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "texts: 7, sent now: 7, done: 7, failed: 0, still queued: 0, lines skipped: 0" in out
    assert db.execute(
        "SELECT DISTINCT metadata FROM gb_artifacts WHERE kind = 'text' AND parent_id IS NULL"
    ).fetchall() == [({"source": "chat"},)]  # each text's metadata stored on its artifact
    assert "sent [" in err and "7/7" in err and "remembered [" in err
    assert live_city(db) == ["Cairo"]  # applied oldest first: the newest home lives
    artifacts = graph_rows(db, "history")["artifacts"]
    assert sorted((row[0], row[1]) for row in artifacts) == sorted(
        (f"Alice lives in {city}.", f"s{i}") for i, city in enumerate(CITIES)
    )
    state = json.loads((tmp_path / "history.jsonl.import.json").read_text())
    assert state["sent"] == 7 and len(state["artifacts"]) == 7


def test_an_import_that_stopped_resumes_where_it_stopped_and_sends_nothing_twice(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    sent_batches = []
    send = Memory.remember_batch

    def stopping_after_two_batches(self, texts, **kwargs):
        if len(sent_batches) == 2:
            raise KeyboardInterrupt  # the user stopped it
        sent_batches.append([t["text"] for t in texts])
        return send(self, texts, **kwargs)

    monkeypatch.setattr(Memory, "remember_batch", stopping_after_two_batches)
    with pytest.raises(KeyboardInterrupt):
        run_import(api, path, "--batch-size", "2")
    assert json.loads((tmp_path / "history.jsonl.import.json").read_text())["sent"] == 4

    sent_batches.append("resumed")
    monkeypatch.setattr(Memory, "remember_batch", send)
    recorded = []
    monkeypatch.setattr(
        Memory,
        "remember_batch",
        lambda self, texts, **kw: recorded.append(len(texts)) or send(self, texts, **kw),
    )
    code = run_import(api, path, "--batch-size", "2")

    out, _ = capsys.readouterr()
    assert code == 0, out
    assert recorded == [2, 1]  # the three texts not sent before
    assert "texts: 7, sent now: 3, done: 7, failed: 0" in out
    assert len(graph_rows(db, "history")["artifacts"]) == 7  # each text once
    assert live_city(db) == ["Cairo"]

    assert run_import(api, path) == 0  # all sent already: nothing more
    assert "sent now: 0, done: 7" in capsys.readouterr().out
    assert len(graph_rows(db, "history")["artifacts"]) == 7


def test_bad_lines_are_skipped_and_said_and_failed_texts_are_listed_with_their_reason(
    api, models, db, local_jobs, tmp_path, capsys
):
    from conftest import reconfigure
    from fakes.anthropic_server import Reply
    from remember_helpers import rule_based_model

    from gligabao import bootstrap

    fake_anthropic, _ = models
    fake_anthropic.responder = lambda body: (
        Reply.error(502) if "Atlantis" in json.dumps(body["messages"]) else rule_based_model(body)
    )
    limits = bootstrap.bundle().limits.model_copy(
        update={"provider_max_attempts": 1, "async_retry_backoff_s": 0}
    )
    reconfigure(limits=limits)
    path = tmp_path / "history.jsonl"
    write_history(
        path,
        [
            {"text": "Alice lives in Paris.", "reference_time": "2010-01-01T00:00:00Z"},
            "not json",
            {"text": "Bob works at Acme.", "when": "yesterday"},
            {"text": "Alice lives in Atlantis.", "reference_time": "2010-06-01T00:00:00Z"},
            {"text": "Alice lives in Rome.", "reference_time": "2011-01-01T00:00:00Z"},
        ],
    )

    code = run_import(api, path)

    out, _ = capsys.readouterr()
    assert code == 1
    assert "texts: 3, sent now: 3, done: 2, failed: 1, still queued: 0, lines skipped: 2" in out
    assert "line 2: skipped: not JSON" in out
    assert "line 3: skipped: unknown fields: when" in out
    [failure] = [line for line in out.splitlines() if "failed (artifact" in line]
    assert failure.startswith("line 4: failed") and "502" in failure
    assert live_city(db) == ["Rome"]


def test_an_import_of_another_file_beside_a_state_file_is_refused(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves()[:2])
    assert run_import(api, path) == 0
    write_history(path, moves())  # the file changed since

    code = run_import(api, path)

    assert code == 2
    assert "kept for another input or dataset" in capsys.readouterr().err
    assert len(graph_rows(db, "history")["artifacts"]) == 2


def test_batches_sent_again_after_a_lost_answer_are_queued_once(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    assert run_import(api, path, "--batch-size", "3") == 0
    state_path = tmp_path / "history.jsonl.import.json"
    state = json.loads(state_path.read_text())
    # A crash after the batches were accepted and before the state file said so.
    state_path.write_text(json.dumps({**state, "sent": 0, "artifacts": []}))

    code = run_import(api, path, "--batch-size", "3")

    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "sent now: 7, done: 7" in out  # answered from the first sends: the same artifacts
    assert json.loads(state_path.read_text())["artifacts"] == state["artifacts"]
    assert len(graph_rows(db, "history")["artifacts"]) == 7
