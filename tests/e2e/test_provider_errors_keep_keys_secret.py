"""A provider's error that quotes the API key it received ("Incorrect API key provided: ...", as
real providers and proxies sometimes answer) never puts the key in the response, a log line or an
inference row: the configured provider keys are redacted where provider errors become messages.

The keys here are a gateway's, of no well-known shape, so that the logs' own redaction of
key-like text (sk-...) cannot be what hides them."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import reconfigure
from fakes.anthropic_server import Reply, api_key_of
from fakes.openai_server import Chat
from pydantic import SecretStr
from query_helpers import alice_works_at_acme
from remember_helpers import use_rule_based_model

ANTHROPIC_KEY = "gw-anthropic-7Hq2Zp9xLm4vRt8k"
OPENAI_KEY = "gw-openai-3Fj8Kd2mQw7eXc5nVb1"
KEYS = (ANTHROPIC_KEY, OPENAI_KEY)
TEXT = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "a"}
QUESTION = {"user_id": "u1", "query": "Where does Alice work?"}


@pytest.fixture
def providers(fake_anthropic, fake_openai, caplog):
    """Both fakes quoting the key of every failed request; the service holding the gateway keys."""
    caplog.set_level(logging.INFO)  # the service's level (the SDKs' DEBUG lines are theirs: off)
    reconfigure(anthropic_api_key=SecretStr(ANTHROPIC_KEY), openai_api_key=SecretStr(OPENAI_KEY))
    use_rule_based_model(fake_anthropic)
    fake_anthropic.echo_key_in_errors = True
    fake_openai.echo_key_in_errors = True
    return fake_anthropic, fake_openai


def rows_of_every_table(db) -> str:
    """The inference rows, and every other row a failed call could have written, as JSON text."""
    tables = ("gb_inferences", "gb_artifacts", "gb_trajectories")
    return json.dumps(
        [db.execute(f"SELECT row_to_json(t)::text FROM {table} t").fetchall() for table in tables]
    )


def logged(capfd, caplog) -> str:
    """The local API's stdout and stderr (Powertools' JSON lines) and every log record with its extras."""
    records = [f"{record.getMessage()} {record.__dict__}" for record in caplog.records]
    return "".join(capfd.readouterr()) + caplog.text + "\n".join(records)


def assert_no_key_anywhere(reply, db, capfd, caplog, fake, quoted_key: str) -> None:
    assert reply.status == 502, reply.json
    assert "failed" in reply.json["error"]  # the provider's failure is told, without its key
    failed = db.execute("SELECT count(*) FROM gb_inferences WHERE NOT ok").fetchone()[0]
    assert failed >= 1  # the failed call was recorded: there was a row to leak into
    output = logged(capfd, caplog)  # once: reading the capture empties it
    rows = rows_of_every_table(db)
    for key in KEYS:
        assert key not in reply.raw.decode()
        assert key not in rows
        assert key not in output
    # The failed request carried the key, so the fake's error quoted it: there was a key to leak.
    assert key_sent(fake.requests[-1].headers) == quoted_key


def key_sent(headers: dict[str, str]) -> str | None:
    return api_key_of(headers)  # x-api-key, else the bearer token (OpenAI's)


@pytest.mark.parametrize("status", [401, 500])  # refused at once; retried (each retry logged), then failed
def test_an_anthropic_error_quoting_the_key_leaves_it_nowhere(api, db, providers, capfd, caplog, status):
    fake_anthropic, _ = providers
    fake_anthropic.queue(Reply.error(status), times=3)

    reply = api.post("/v1/gb/remember", TEXT)

    assert_no_key_anywhere(reply, db, capfd, caplog, fake_anthropic, ANTHROPIC_KEY)
    assert len(fake_anthropic.messages) == (1 if status == 401 else 3)


@pytest.mark.parametrize("status", [401, 500])
def test_an_openai_compatible_llm_error_quoting_the_key_leaves_it_nowhere(
    api, db, providers, capfd, caplog, status
):
    _, fake_openai = providers
    reconfigure(llm_provider="openai", llm_model="llama3.1:8b", llm_structured_output="off")
    fake_openai.queue_chat(Chat(status=status), times=3)

    reply = api.post("/v1/gb/remember", TEXT)

    assert_no_key_anywhere(reply, db, capfd, caplog, fake_openai, OPENAI_KEY)
    assert len(fake_openai.chat_requests) == (1 if status == 401 else 3)


@pytest.mark.parametrize("status", [401, 500])
def test_an_embeddings_error_quoting_the_key_leaves_it_nowhere(api, db, providers, capfd, caplog, status):
    _, fake_openai = providers
    alice_works_at_acme(db)
    fake_openai.fail(status, times=3)

    reply = api.post("/v1/gb/query", QUESTION)

    assert_no_key_anywhere(reply, db, capfd, caplog, fake_openai, OPENAI_KEY)
    assert len(fake_openai.embedding_requests) == (1 if status == 401 else 3)


def test_an_embeddings_error_of_a_remember_leaves_the_key_nowhere(api, db, providers, capfd, caplog):
    _, fake_openai = providers
    fake_openai.fail(401)

    reply = api.post("/v1/gb/remember", TEXT)

    assert_no_key_anywhere(reply, db, capfd, caplog, fake_openai, OPENAI_KEY)


def test_an_asynchronous_remember_failed_by_such_an_error_keeps_the_key_out_of_its_artifact(
    api, db, providers, capfd, caplog, sqs_jobs
):
    from job_helpers import artifact_status, pump

    fake_anthropic, _ = providers
    fake_anthropic.queue(Reply.error(401), times=20)  # every attempt of every delivery

    accepted = api.post("/v1/gb/remember", {**TEXT, "async": True})
    pump(sqs_jobs)

    artifact_id = accepted.json["artifact_id"]
    status, error = artifact_status(db, artifact_id)
    assert status == "failed" and "LLM call of stage extract failed" in error
    shown = api.get(f"/v1/gb/artifacts/{artifact_id}?user_id=u1")
    output = logged(capfd, caplog)  # once: reading the capture empties it
    rows = rows_of_every_table(db)
    for key in KEYS:
        assert key not in error
        assert key not in shown.raw.decode()
        assert key not in rows
        assert key not in output
    assert key_sent(fake_anthropic.requests[-1].headers) == ANTHROPIC_KEY
