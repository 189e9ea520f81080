"""`gligabao import FILE.jsonl` against the local API: a history sent in batches through the
client, oldest first, with a progress bar on stderr; resumed where it stopped; counts and failures
printed at the end. A bad line never stops it: refused by the API's own model before sending, or
by the API itself (its batch halved until the line stands alone), it is skipped and listed."""

from __future__ import annotations

import json

import pytest
from bulk_helpers import graph_rows

from gligabao.api.remember_models import BatchRememberRequest
from gligabao.client.memory import Memory
from gligabao.errors import BadRequest
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


def live_city(db, dataset: str = "history") -> list[str]:
    return [row[0].split(" ")[2] for row in graph_rows(db, dataset)["edges"] if row[3] is None]


def import_state(path, dataset: str = "history") -> dict:
    """The state file's entry of the import of `path` into user u1's `dataset`."""
    kept = json.loads(path.with_name(path.name + ".import.json").read_text())
    [entry] = [entry for entry in kept["imports"] if (entry["user_id"], entry["dataset"]) == ("u1", dataset)]
    return entry


def recording_batches(monkeypatch) -> list[list[str]]:
    """The texts of each batch the client sends from now on."""
    sent: list[list[str]] = []
    send = Memory.remember_batch

    def recorded(self, texts, **kwargs):
        sent.append([text["text"] for text in texts])
        return send(self, texts, **kwargs)

    monkeypatch.setattr(Memory, "remember_batch", recorded)
    return sent


def refusing_atlantis(monkeypatch) -> None:
    """The server refuses (400) any batch holding a text about Atlantis, naming the text, as a rule of
    its own that the client's check of the lines does not know."""
    check_size = BatchRememberRequest.check_size

    def refusing(self, limits):
        check_size(self, limits)
        for index, text in enumerate(self.texts):
            if "Atlantis" in text.text:
                raise BadRequest(f"texts[{index}].text: no such place")

    monkeypatch.setattr(BatchRememberRequest, "check_size", refusing)


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
    state = import_state(path)
    assert state["handled"] == 7 and len(state["artifacts"]) == 7 and state["refused"] == []


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
    assert import_state(path)["handled"] == 4

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
    assert "line 2: skipped: not JSON (Expecting value at column 1)" in out  # the file's line, not the JSON's
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
    assert "kept for another version of the file" in capsys.readouterr().err
    assert len(graph_rows(db, "history")["artifacts"]) == 2


def test_batches_sent_again_after_a_lost_answer_are_queued_once(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    assert run_import(api, path, "--batch-size", "3") == 0
    state_path = tmp_path / "history.jsonl.import.json"
    state = import_state(path)
    # A crash after the batches were accepted and before the state file said so.
    state_path.write_text(json.dumps({"imports": [{**state, "handled": 0, "artifacts": []}]}))

    code = run_import(api, path, "--batch-size", "3")

    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "sent now: 7, done: 7" in out  # answered from the first sends: the same artifacts
    assert import_state(path)["artifacts"] == state["artifacts"]
    assert len(graph_rows(db, "history")["artifacts"]) == 7


# --- a bad line never stops an import -------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        pytest.param(
            {"reference_time": "2024-01-01"},
            "reference_time must be an RFC 3339 time with an offset",
            id="date-only reference_time",
        ),
        pytest.param(
            {"reference_time": "2024-01-01T10:00:00"},
            "reference_time must be an RFC 3339 time with an offset",
            id="naive reference_time",
        ),
        pytest.param(
            {"metadata": {"source": {"app": "chat"}}},
            "metadata['source'] must be a string, a finite number or a boolean",
            id="metadata holding an object",
        ),
        pytest.param(
            {"metadata": {"tags": ["work", "home"]}},
            "metadata['tags'] must be a string, a finite number or a boolean",
            id="metadata holding a list",
        ),
        pytest.param(
            {"session_id": "chat\u00071"},
            "session_id must not contain control characters",
            id="control character in session_id",
        ),
    ],
)
def test_a_line_the_batch_route_would_refuse_is_skipped_and_listed_and_the_rest_imported(
    api, models, db, local_jobs, tmp_path, capsys, bad, reason
):
    path = tmp_path / "history.jsonl"
    write_history(
        path,
        [
            {"text": "Alice lives in Paris.", "reference_time": "2010-01-01T00:00:00Z"},
            {"text": "Bob works at Acme.", **bad},
            {"text": "Alice lives in Rome.", "reference_time": "2011-01-01T00:00:00Z"},
        ],
    )

    code = run_import(api, path)

    out, err = capsys.readouterr()
    assert code == 1, out + err  # a line was skipped
    assert "texts: 2, sent now: 2, done: 2, failed: 0, still queued: 0, lines skipped: 1" in out
    [skipped] = [line for line in out.splitlines() if line.startswith("line ")]
    assert skipped.startswith(f"line 2: skipped: {reason}")
    assert live_city(db) == ["Rome"]


def test_a_line_without_text_is_said_to_have_no_text(api, models, db, local_jobs, tmp_path, capsys):
    path = tmp_path / "history.jsonl"
    write_history(
        path,
        [
            {"text": "Alice lives in Paris.", "reference_time": "2010-01-01T00:00:00Z"},
            {"note": "a line someone left in"},
            {"text": None, "session_id": "s1"},
        ],
    )

    code = run_import(api, path)

    out, _ = capsys.readouterr()
    assert code == 1
    assert "texts: 1, sent now: 1, done: 1, failed: 0, still queued: 0, lines skipped: 2" in out
    assert "line 2: skipped: text is missing; unknown fields: note" in out
    assert "line 3: skipped: text is missing" in out


def test_batches_are_cut_by_bytes_below_the_body_limit_as_well_as_by_count(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    path = tmp_path / "history.jsonl"
    filler = "Alice likes long letters. " * 512  # 13 KB each: 100 are 1.3 MB, more than a body's 1 MiB
    write_history(path, [{"text": f"Letter {i}. {filler}"[:13_000]} for i in range(100)])
    batches = recording_batches(monkeypatch)

    code = run_import(api, path)

    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "texts: 100, sent now: 100, done: 100, failed: 0" in out
    assert len(batches) == 2 and sum(len(batch) for batch in batches) == 100
    assert all(len(json.dumps(batch).encode()) < 1024 * 1024 - 4096 for batch in batches)
    assert import_state(path)["handled"] == 100


def test_a_text_the_server_refuses_is_isolated_and_skipped_and_the_rest_sent(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    refusing_atlantis(monkeypatch)
    path = tmp_path / "history.jsonl"
    history = moves()
    history.insert(3, {"text": "Alice lives in Atlantis.", "reference_time": "2013-06-01T00:00:00Z"})
    write_history(path, history)
    batches = recording_batches(monkeypatch)

    code = run_import(api, path)

    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "texts: 8, sent now: 7, done: 7, failed: 0, still queued: 0, lines skipped: 1" in out
    assert "line 4: skipped: refused by the API (400): text: no such place" in out
    assert len(batches[0]) == 8 and ["Alice lives in Atlantis."] in batches  # halved down to it
    assert len(graph_rows(db, "history")["artifacts"]) == 7
    assert live_city(db) == ["Cairo"]
    assert import_state(path)["refused"] == [[4, "refused by the API (400): text: no such place"]]


def test_a_batch_too_large_for_the_server_is_halved_and_a_text_too_large_alone_skipped(
    api, models, db, local_jobs, tmp_path, capsys
):
    from conftest import reconfigure

    from gligabao import bootstrap

    # The server takes smaller bodies than the client's batches (a deployment's GB_REMEMBER_MAX_BODY_BYTES).
    limits = bootstrap.bundle().limits.model_copy(update={"remember_max_body_bytes": 2000})
    reconfigure(limits=limits)
    path = tmp_path / "history.jsonl"
    history = moves()
    history.insert(2, {"text": "Alice wrote a long letter. " * 100, "reference_time": "2014-06-01T00:00:00Z"})
    write_history(path, history)

    code = run_import(api, path)

    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "texts: 8, sent now: 7, done: 7, failed: 0, still queued: 0, lines skipped: 1" in out
    assert "line 3: skipped: refused by the API (413): request body is larger than 2000 bytes" in out
    assert live_city(db) == ["Cairo"]


def test_a_rerun_resumes_after_the_lines_sent_and_refused_sending_nothing_twice(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    refusing_atlantis(monkeypatch)
    path = tmp_path / "history.jsonl"
    history = moves()
    # Sent second, in the first run's first batch: refused there, by the server.
    history.insert(1, {"text": "Alice lives in Atlantis.", "reference_time": "2010-06-01T00:00:00Z"})
    history.insert(4, {"text": "Bob works at Acme.", "reference_time": "2024-01-01"})
    write_history(path, history)
    send = Memory.remember_batch
    accepted = []

    def stopping_after_two_accepted_batches(self, texts, **kwargs):
        if len(accepted) == 2:
            raise KeyboardInterrupt  # the user stopped it
        answer = send(self, texts, **kwargs)
        accepted.append(len(texts))
        return answer

    monkeypatch.setattr(Memory, "remember_batch", stopping_after_two_accepted_batches)
    with pytest.raises(KeyboardInterrupt):
        run_import(api, path, "--batch-size", "2")
    assert import_state(path)["handled"] == 4

    monkeypatch.setattr(Memory, "remember_batch", send)
    batches = recording_batches(monkeypatch)
    code = run_import(api, path, "--batch-size", "2")

    out, _ = capsys.readouterr()
    assert code == 1
    assert "texts: 8, sent now: 4, done: 7, failed: 0, still queued: 0, lines skipped: 2" in out
    assert "line 2: skipped: refused by the API (400): text: no such place" in out  # said by the first run
    assert "line 5: skipped: reference_time must be an RFC 3339 time with an offset" in out
    assert batches == [  # neither what the first run sent nor what the server refused it
        ["Alice lives in Lima.", "Alice lives in Kyiv."],
        ["Alice lives in Quito.", "Alice lives in Cairo."],
    ]
    assert len(graph_rows(db, "history")["artifacts"]) == 7  # each text once
    assert live_city(db) == ["Cairo"]

    batches.clear()
    assert run_import(api, path) == 1  # all sent or refused already: nothing more
    assert batches == []
    assert "sent now: 0, done: 7, failed: 0, still queued: 0, lines skipped: 2" in capsys.readouterr().out


def test_the_same_file_is_imported_into_another_dataset_beside_the_first_ones_state(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    assert run_import(api, path) == 0

    code = main(["import", str(path), "--api", api.base_url, "--user-id", "u1", "--dataset", "other"])

    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "texts: 7, sent now: 7, done: 7, failed: 0" in out
    assert len(graph_rows(db, "other")["artifacts"]) == 7 and live_city(db, "other") == ["Cairo"]
    assert import_state(path, "history")["handled"] == import_state(path, "other")["handled"] == 7
    assert run_import(api, path) == 0  # the first dataset's import is still whole: nothing resent
    assert "sent now: 0, done: 7" in capsys.readouterr().out
    assert len(graph_rows(db, "history")["artifacts"]) == 7


def test_a_state_file_of_the_earlier_one_dataset_format_lets_the_file_into_another_dataset(
    api, models, db, local_jobs, tmp_path, capsys
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    assert run_import(api, path) == 0
    state_path = path.with_name(path.name + ".import.json")
    entry = import_state(path)
    # What the importer wrote before imports were kept per dataset: the one it was run into.
    state_path.write_text(
        json.dumps(
            {
                "input_sha256": entry["input_sha256"],
                "dataset": "history",
                "sent": 7,
                "artifacts": entry["artifacts"],
            }
        )
    )
    capsys.readouterr()

    code = main(["import", str(path), "--api", api.base_url, "--user-id", "u1", "--dataset", "other"])

    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "texts: 7, sent now: 7, done: 7, failed: 0" in out
    assert import_state(path, "history")["handled"] == 7  # the earlier import kept, now as an entry
    assert run_import(api, path) == 0
    assert "sent now: 0, done: 7" in capsys.readouterr().out
    assert len(graph_rows(db, "history")["artifacts"]) == 7


def test_a_rerun_that_sends_nothing_shows_no_rate(api, models, db, local_jobs, tmp_path, capsys):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    assert run_import(api, path) == 0
    assert "/s)" in capsys.readouterr().err  # the first run's rate

    assert run_import(api, path) == 0

    out, err = capsys.readouterr()
    assert "sent now: 0" in out
    assert "7/7" in err and "/s" not in err  # nothing sent or remembered by this run: no rate


def test_a_resumed_runs_rate_counts_only_the_texts_it_sent_over_its_own_time(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    import io
    import re

    from gligabao.client.bulk_import import import_history

    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    send = Memory.remember_batch

    batches = []

    def stopping_after_four(self, texts, **kwargs):
        if len(batches) == 2:
            raise KeyboardInterrupt  # the user stopped it, 4 texts sent
        batches.append(texts)
        return send(self, texts, **kwargs)

    monkeypatch.setattr(Memory, "remember_batch", stopping_after_four)
    with pytest.raises(KeyboardInterrupt):
        run_import(api, path, "--batch-size", "2")
    now = [1000.0]  # the first run's texts were sent long before this run's clock starts

    def taking_six_seconds(self, texts, **kwargs):
        now[0] += 6.0
        return send(self, texts, **kwargs)

    monkeypatch.setattr(Memory, "remember_batch", taking_six_seconds)
    progress = io.StringIO()
    with Memory(api.base_url, user_id="u1", dataset="history") as memory:
        report = import_history(
            memory, path, batch_size=3, wait=False, progress=progress, clock=lambda: now[0]
        )

    assert report.sent_now == 3
    # 3 texts of this run in its 6 seconds: 0.5/s (not 7 texts in 6 s, nor 4 in no time at the start)
    assert re.findall(r"(\d+/7)(?: \(([\d.]+)/s\))?", progress.getvalue()) == [("4/7", ""), ("7/7", "0.5")]


def test_a_dataset_or_user_the_api_refuses_stops_the_import_instead_of_skipping_every_text(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    path = tmp_path / "history.jsonl"
    write_history(path, moves())
    batches = recording_batches(monkeypatch)

    code = main(["import", str(path), "--api", api.base_url, "--user-id", "u1", "--dataset", "my chats"])

    assert code == 2 and batches == []  # said before anything is sent
    assert "dataset must be 1-64 characters" in capsys.readouterr().err

    code = main(["import", str(path), "--api", api.base_url, "--user-id", "u1\u0001", "--dataset", "history"])

    assert code == 1
    assert "stopped: 400: user_id must" in capsys.readouterr().err
    assert len(batches) == 1  # not halved text by text: every batch would be refused
    assert not path.with_name(path.name + ".import.json").exists()  # no text said refused


def test_a_half_of_a_refused_batch_taken_before_a_crash_is_sent_again_as_it_was_and_queued_once(
    api, models, db, local_jobs, tmp_path, capsys, monkeypatch
):
    refusing_atlantis(monkeypatch)
    path = tmp_path / "history.jsonl"
    # Sent first: the first batch of 4 is halved, then its second half (Rome, Oslo) taken.
    write_history(
        path, [*moves(), {"text": "Alice lives in Atlantis.", "reference_time": "2009-01-01T00:00:00Z"}]
    )
    send = Memory.remember_batch

    def crashing_once_rome_and_oslo_are_taken(self, texts, **kwargs):
        answer = send(self, texts, **kwargs)
        if [text["text"] for text in texts] == ["Alice lives in Rome.", "Alice lives in Oslo."]:
            raise KeyboardInterrupt  # after the API took them, before the state file says so
        return answer

    monkeypatch.setattr(Memory, "remember_batch", crashing_once_rome_and_oslo_are_taken)
    with pytest.raises(KeyboardInterrupt):
        run_import(api, path, "--batch-size", "4")
    assert import_state(path)["handled"] == 2  # Atlantis refused, Paris sent

    monkeypatch.setattr(Memory, "remember_batch", send)
    batches = recording_batches(monkeypatch)
    code = run_import(api, path, "--batch-size", "4")

    out, _ = capsys.readouterr()
    assert code == 1
    assert batches[0] == ["Alice lives in Rome.", "Alice lives in Oslo."]  # the same request: replayed
    assert "texts: 8, sent now: 6, done: 7, failed: 0, still queued: 0, lines skipped: 1" in out
    assert len(graph_rows(db, "history")["artifacts"]) == 7  # Rome and Oslo queued once
    assert live_city(db) == ["Cairo"]
