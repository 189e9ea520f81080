"""Extracting ahead (memory/prepare_ahead.py): a job of a batch extracts and embeds the next queued
texts of its dataset beside its own work, the jobs behind it only resolve and store, and what is
stored is what the batch stores without it."""

from __future__ import annotations

import json

import pytest
from fakes.anthropic_server import Reply
from job_helpers import artifact_status, pump
from remember_helpers import call_handler, remember_handler, rule_based_model, stage_of

from gligabao.ai.prompts import extract as extract_prompts
from gligabao.ai.prompts.extract import EXTRACT_PROMPT_FINGERPRINT

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Quito"]


def _batch(dataset: str = "main", cities=CITIES, **fields) -> list[int]:
    """A batch of texts, each moving Alice to the next city a year later; the artifacts' ids."""
    texts = [
        {
            "text": f"Alice lives in {city}. Bob works at Firm{i}.",
            "reference_time": f"{2010 + i}-01-01T00:00:00Z",
        }
        for i, city in enumerate(cities)
    ]
    body = {"user_id": "u1", "dataset": dataset, "texts": texts, **fields}
    reply = call_handler(remember_handler(), body, path="/v1/gb/remember/batch")
    assert reply.status == 202, reply.json
    return [a["artifact_id"] for a in reply.json["artifacts"]]


def _with_limits(**update) -> None:
    from conftest import reconfigure

    from gligabao import bootstrap

    reconfigure(limits=bootstrap.bundle().limits.model_copy(update=update))


@pytest.fixture(autouse=True)
def one_text_at_a_time(sqs_jobs):
    """Extracting ahead serves the texts a job remembers one at a time (windows: test_bulk_windows.py)."""
    _with_limits(bulk_window_texts=1)


def _extract_calls(fake_anthropic) -> int:
    return sum(stage_of(body) == "extract" for body in fake_anthropic.messages)


def _prepared(db) -> list[int]:
    return [row[0] for row in db.execute("SELECT artifact_id FROM gb_prepared_texts ORDER BY artifact_id")]


def _graph(db, dataset: str) -> list[tuple]:
    """The dataset's facts: ends, relation, validity and whether each is live."""
    return db.execute(
        """SELECT s.name, e.relation, t.name, e.valid_at, e.invalid_at, e.expired_at IS NULL
           FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
           JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.name = %s ORDER BY 1, 2, 3""",
        [dataset],
    ).fetchall()


def _logged(capsys) -> list[str]:
    """The messages of the worker's log lines (JSON, on stdout) since the last call."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return [line["message"] for line in lines if "message" in line]


def test_the_first_job_prepares_the_next_four_texts_and_each_text_is_extracted_and_embedded_once(
    db, models, sqs_jobs, capsys
):
    fake_anthropic, fake_openai = models
    ids = _batch()
    capsys.readouterr()

    pump(sqs_jobs, rounds=1)

    assert "remember.prepare_ahead.used" not in _logged(capsys)

    assert artifact_status(db, ids[0]) == ("done", None)
    assert _prepared(db) == ids[1:5]  # the window: the next four, in the queue's order
    assert _extract_calls(fake_anthropic) == 5
    assert len(fake_openai.embedding_requests) == 5

    pump(sqs_jobs, rounds=1)  # the second job uses its text and starts nothing

    assert _logged(capsys).count("remember.prepare_ahead.used") == 1
    assert _prepared(db) == ids[2:5]
    assert _extract_calls(fake_anthropic) == 5
    assert len(fake_openai.embedding_requests) == 5

    pump(sqs_jobs)

    assert [artifact_status(db, i)[0] for i in ids] == ["done"] * len(ids)
    assert _extract_calls(fake_anthropic) == len(ids)
    assert len(fake_openai.embedding_requests) == len(ids)
    assert _prepared(db) == []
    live = [(s, r, t) for s, r, t, _, _, is_live in _graph(db, "main") if r == "lives_in" and is_live]
    assert live == [("Alice", "lives_in", "Quito")]


def test_what_a_batch_stores_is_the_same_with_and_without_extracting_ahead(db, models, sqs_jobs):
    fake_anthropic, _ = models
    _with_limits(async_prepare_ahead=0)
    _batch("without")
    pump(sqs_jobs)
    _with_limits(async_prepare_ahead=4)
    _batch("with")
    pump(sqs_jobs)

    assert _graph(db, "with") == _graph(db, "without")
    assert len([row for row in _graph(db, "with") if row[1] == "lives_in"]) == len(CITIES)
    assert _extract_calls(fake_anthropic) == 2 * len(CITIES)


def test_every_call_made_ahead_is_recorded_with_the_texts_dataset_and_session(db, models, sqs_jobs):
    _batch()
    pump(sqs_jobs)

    rows = db.execute(
        """SELECT i.stage, count(*) FROM gb_inferences i JOIN gb_datasets d ON d.id = i.dataset_id
           WHERE d.name = 'main' AND i.user_id = 'u1' GROUP BY i.stage ORDER BY 1"""
    ).fetchall()
    stages = dict(rows)
    assert stages["extract"] == len(CITIES)
    assert stages["embed"] == len(CITIES)


def test_a_prepared_text_made_with_other_models_is_not_used_and_the_job_extracts_again(
    db, models, sqs_jobs, capsys
):
    fake_anthropic, _ = models
    ids = _batch()
    pump(sqs_jobs, rounds=1)
    capsys.readouterr()
    db.execute(
        """UPDATE gb_prepared_texts SET options = '{"reasoning": {}, "models": {"extract": "another"}}'
           WHERE artifact_id = %s""",
        [ids[1]],
    )

    pump(sqs_jobs, rounds=1)

    assert _extract_calls(fake_anthropic) == 6  # five, and the second text's again
    assert "remember.prepare_ahead.not_used" in _logged(capsys)
    assert artifact_status(db, ids[1]) == ("done", None)
    assert _prepared(db) == ids[2:5]  # taken (deleted), used or not


def test_a_text_prepared_before_a_deploy_that_changed_the_model_is_not_used(
    db, models, sqs_jobs, capsys, monkeypatch
):
    from gligabao import bootstrap

    fake_anthropic, _ = models
    ids = _batch()
    pump(sqs_jobs, rounds=1)
    [options] = [
        row[0] for row in db.execute("SELECT options FROM gb_prepared_texts WHERE artifact_id = %s", [ids[1]])
    ]
    llm = bootstrap.bundle().llm
    assert options["extract"] == f"anthropic:{llm.default_model}:{EXTRACT_PROMPT_FINGERPRINT}"
    capsys.readouterr()

    monkeypatch.setattr(llm, "default_model", "claude-haiku-9-9")  # the next deploy's GB_LLM_MODEL
    pump(sqs_jobs, rounds=1)

    assert _extract_calls(fake_anthropic) == 6
    assert "remember.prepare_ahead.not_used" in _logged(capsys)
    assert artifact_status(db, ids[1]) == ("done", None)


def test_a_text_prepared_before_a_deploy_that_changed_the_extraction_prompt_is_not_used(
    db, models, sqs_jobs, capsys, monkeypatch
):
    from gligabao.memory import prepare_ahead

    fake_anthropic, _ = models
    ids = _batch()
    pump(sqs_jobs, rounds=1)
    capsys.readouterr()

    # The next deploy's prompt: its fingerprint is computed from the prompt at import.
    monkeypatch.setattr(extract_prompts, "EXTRACT_SYSTEM", extract_prompts.EXTRACT_SYSTEM + "\nBe brief.")
    monkeypatch.setattr(prepare_ahead, "EXTRACT_PROMPT_FINGERPRINT", extract_prompts._fingerprint())
    assert prepare_ahead.EXTRACT_PROMPT_FINGERPRINT != EXTRACT_PROMPT_FINGERPRINT
    pump(sqs_jobs, rounds=1)

    assert _extract_calls(fake_anthropic) == 6  # five, and the second text's again
    assert "remember.prepare_ahead.not_used" in _logged(capsys)
    assert artifact_status(db, ids[1]) == ("done", None)


def test_the_extraction_prompt_fingerprint_follows_the_prompt_and_its_layout(monkeypatch):
    fingerprint = extract_prompts._fingerprint()
    assert len(fingerprint) == 12 and fingerprint == EXTRACT_PROMPT_FINGERPRINT
    monkeypatch.setattr(
        extract_prompts, "EXTRACT_SYSTEM", extract_prompts.EXTRACT_SYSTEM.replace("fact", "Fact")
    )
    assert extract_prompts._fingerprint() != fingerprint
    monkeypatch.undo()
    monkeypatch.setattr(extract_prompts, "rfc3339", lambda t: "then")  # the content's layout
    assert extract_prompts._fingerprint() != fingerprint


def test_a_prepared_row_that_is_not_an_extraction_is_not_used(db, models, sqs_jobs):
    fake_anthropic, _ = models
    ids = _batch()
    pump(sqs_jobs, rounds=1)
    db.execute(
        """UPDATE gb_prepared_texts SET extraction = '{"entities": 5}' WHERE artifact_id = %s""", [ids[1]]
    )
    db.execute("UPDATE gb_prepared_texts SET embedded = '{}' WHERE artifact_id = %s", [ids[2]])

    pump(sqs_jobs)

    assert _extract_calls(fake_anthropic) == len(CITIES) + 2
    assert [artifact_status(db, i)[0] for i in ids] == ["done"] * len(ids)


def test_a_failed_preparation_is_recorded_and_the_text_is_extracted_by_its_own_job(db, models, sqs_jobs):
    fake_anthropic, _ = models
    _with_limits(provider_max_attempts=1)
    failed = []

    def failing_once_on_oslo(body: dict) -> Reply | dict:
        if stage_of(body) == "extract" and "Oslo" in json.dumps(body["messages"]) and not failed:
            failed.append(True)
            return Reply.error(500)
        return rule_based_model(body)

    fake_anthropic.responder = failing_once_on_oslo
    ids = _batch()

    replies = pump(sqs_jobs)

    assert failed and all(r == {"batchItemFailures": []} for r in replies)  # no job failed
    assert [artifact_status(db, i)[0] for i in ids] == ["done"] * len(ids)
    assert _extract_calls(fake_anthropic) == len(CITIES) + 1
    ok = db.execute("SELECT ok, count(*) FROM gb_inferences WHERE stage = 'extract' GROUP BY ok").fetchall()
    assert dict(ok) == {True: len(CITIES), False: 1}


def test_when_the_prepared_texts_cannot_be_kept_their_calls_are_still_recorded(
    db, models, sqs_jobs, monkeypatch
):
    from gligabao.db import prepared as prepared_rows

    def broken_save(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(prepared_rows, "save", broken_save)
    ids = _batch(cities=CITIES[:3])

    pump(sqs_jobs)

    assert [artifact_status(db, i)[0] for i in ids] == ["done"] * 3
    extracts = db.execute("SELECT count(*) FROM gb_inferences WHERE stage = 'extract'").fetchone()[0]
    # The first job prepared the second and third texts, the second job the third again (none was
    # kept, so the window was dry), and each text's own job extracted it.
    assert extracts == 2 + 1 + 3


def test_forgetting_the_dataset_or_the_artifact_deletes_what_was_prepared(db, models, sqs_jobs):
    from gligabao import bootstrap
    from gligabao.memory.datasets import delete_dataset
    from gligabao.memory.forget import forget_artifact

    ids = _batch()
    pump(sqs_jobs, rounds=1)
    forget_artifact(bootstrap.bundle(), "u1", ids[1])

    assert _prepared(db) == ids[2:5]

    delete_dataset(bootstrap.bundle(), "u1", "main")

    assert _prepared(db) == []
    assert pump(sqs_jobs) != []  # the jobs left find nothing to run
    assert db.execute("SELECT count(*) FROM gb_edges").fetchone()[0] == 0


def test_long_texts_eval_jobs_and_a_setting_of_zero_prepare_nothing(db, models, sqs_jobs):
    _with_limits(chunking_threshold_chars=30)  # every text of the batch is chunked
    _batch("long", cities=CITIES[:3])
    pump(sqs_jobs, rounds=1)
    assert _prepared(db) == []
    pump(sqs_jobs)

    _with_limits(chunking_threshold_chars=6000)
    _batch("eval", cities=CITIES[:3], eval=True)
    pump(sqs_jobs, rounds=1)
    assert _prepared(db) == []
    pump(sqs_jobs)

    _with_limits(async_prepare_ahead=0)
    _batch("off", cities=CITIES[:3])
    pump(sqs_jobs, rounds=1)
    assert _prepared(db) == []


def test_the_window_is_not_refilled_while_texts_of_the_dataset_are_prepared(db, models, sqs_jobs):
    fake_anthropic, _ = models
    ids = _batch(cities=[*CITIES, "Bern", "Doha"])
    pump(sqs_jobs, rounds=4)  # the first prepares 2-5; the next three use theirs

    assert _prepared(db) == [ids[4]]
    assert _extract_calls(fake_anthropic) == 5

    pump(sqs_jobs, rounds=1)  # the fifth finds none left: it prepares the three after it

    assert _prepared(db) == ids[5:8]
    assert _extract_calls(fake_anthropic) == 8


def test_a_text_prepared_over_an_hour_ago_no_longer_holds_the_window(db, models, sqs_jobs):
    ids = _batch()
    pump(sqs_jobs, rounds=1)
    db.execute("UPDATE gb_prepared_texts SET created_at = now() - interval '2 hours'")  # their jobs lost

    pump(sqs_jobs, rounds=1)

    assert _prepared(db) == ids[2:6]  # the old ones kept, the one behind them prepared


def test_a_preparation_slower_than_its_bound_is_abandoned_and_its_text_extracted_by_its_own_job(
    db, models, sqs_jobs, monkeypatch
):
    from gligabao.memory import prepare_ahead

    fake_anthropic, _ = models
    # 12 s (the reply held back takes 15): room for the calls and the deadline margin on a slow machine
    monkeypatch.setattr(prepare_ahead, "PREPARE_SECONDS", 12.0)
    slowed = []

    def slow_once_on_oslo(body: dict) -> Reply | dict:
        if stage_of(body) == "extract" and "Oslo" in json.dumps(body["messages"]) and not slowed:
            slowed.append(True)
            return Reply(data=rule_based_model(body), delay_s=15.0)
        return rule_based_model(body)

    fake_anthropic.responder = slow_once_on_oslo
    ids = _batch(cities=CITIES[:4])

    pump(sqs_jobs, rounds=1)

    assert slowed and _prepared(db) == [ids[1], ids[3]]  # Oslo's was given up
    failed = db.execute("SELECT stage, error FROM gb_inferences WHERE NOT ok").fetchall()
    assert [stage for stage, _ in failed] == ["extract"]
    pump(sqs_jobs)
    assert [artifact_status(db, i)[0] for i in ids] == ["done"] * 4


def test_the_texts_prepared_are_the_next_in_the_queue_not_the_oldest(db, models, sqs_jobs):
    # A back-fill queued behind a batch (older reference times) waits its turn: the batch's own
    # next texts are prepared, and within a request the texts queued first are prepared first.
    batch = _batch(cities=["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Quito"])
    texts = [
        {"text": f"Carol visited Town{i}.", "reference_time": f"{2003 - i}-01-01T00:00:00Z"} for i in range(4)
    ]
    reply = call_handler(
        remember_handler(), {"user_id": "u1", "dataset": "main", "texts": texts}, path="/v1/gb/remember/batch"
    )
    backfill = [a["artifact_id"] for a in reply.json["artifacts"]]

    pump(sqs_jobs, rounds=1)
    assert _prepared(db) == batch[1:5]

    # The rest of the batch; its fifth job prepared its sixth text and the back-fill's first three.
    pump(sqs_jobs, rounds=5)
    assert [artifact_status(db, i)[0] for i in batch] == ["done"] * len(batch)
    assert sorted(backfill) == backfill[::-1]  # the ids follow the queue's order: the oldest first
    assert _prepared(db) == sorted(backfill)[:3]


def test_only_texts_queued_with_the_jobs_own_options_are_prepared(db, models, sqs_jobs):
    # An eval batch and a batch with other models, queued behind a text, are not prepared by its
    # job: none of their jobs could use what it prepared.
    fake_anthropic, _ = models
    from conftest import reconfigure

    reconfigure(allowed_models="claude-haiku-5-5,claude-other-1")
    first = _batch(cities=["Paris"])
    evals = _batch(cities=["Rome", "Oslo"], eval=True)
    others = _batch(cities=["Lima", "Kyiv"], models={"extract": "claude-other-1"})
    same = _batch(cities=["Quito"])

    pump(sqs_jobs, rounds=1)

    assert artifact_status(db, first[0]) == ("done", None)
    assert _prepared(db) == same
    pump(sqs_jobs)
    assert [artifact_status(db, i)[0] for i in evals + others + same] == ["done"] * 5
    assert _extract_calls(fake_anthropic) == 6  # each text once
