"""The eval run's calls go through the package's client: the suite's body as is, `"eval": true`
included, a remember's Idempotency-Key, the answer as JSON; a failure is a CallFailed with the
API's status and error text."""

from __future__ import annotations

import json

import httpx2
import pytest

from gligabao.client import Memory
from gligabao.evals.api import CallFailed
from gligabao.evals.client_api import ClientApi

TRAJECTORY = {"schema_version": "ATIF-v1.8", "final_metrics": {"total_prompt_tokens": 12}}


def api_answering(handler) -> tuple[ClientApi, list[httpx2.Request]]:
    sent: list[httpx2.Request] = []

    def record(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return handler(request)

    memory = Memory("http://api.invalid", transport=httpx2.MockTransport(record), retries=0)
    return ClientApi(memory), sent


def test_a_remember_sends_the_body_as_is_with_its_idempotency_key_and_returns_the_json():
    api, sent = api_answering(lambda request: httpx2.Response(200, json={"trajectory": TRAJECTORY}))
    body = {"user_id": "eval-1", "dataset": "alice", "text": "Alice works at Acme.", "eval": True}

    answer = api.remember(body, idempotency_key="k1")

    assert answer == {"trajectory": TRAJECTORY}
    assert (sent[0].method, sent[0].url.path) == ("POST", "/v1/gb/remember")
    assert json.loads(sent[0].content) == body
    assert sent[0].headers["Idempotency-Key"] == "k1"


def test_a_query_returns_the_answer_and_its_trajectory_field_for_field():
    api, sent = api_answering(
        lambda request: httpx2.Response(200, json={"answer": "Acme", "trajectory": TRAJECTORY})
    )

    answer = api.query({"user_id": "eval-1", "query": "Where?", "eval": True})

    assert answer["trajectory"] == TRAJECTORY and sent[0].url.path == "/v1/gb/query"


def test_an_error_of_the_api_is_a_call_failure_with_its_status_and_text():
    api, _ = api_answering(
        lambda request: httpx2.Response(502, json={"error": "LLM call of stage query failed"})
    )

    with pytest.raises(CallFailed) as failed:
        api.query({"user_id": "eval-1", "query": "Where?", "eval": True})

    assert (failed.value.status, failed.value.text) == (502, "LLM call of stage query failed")


def test_an_unreachable_api_is_a_call_failure_without_a_status():
    def refuse(request):
        raise httpx2.ConnectError("connection refused")

    api, _ = api_answering(refuse)

    with pytest.raises(CallFailed) as failed:
        api.remember({"user_id": "eval-1", "text": "x", "eval": True}, idempotency_key="k")

    assert failed.value.status is None and "cannot reach" in failed.value.text


def test_the_authentication_is_inferred_as_for_every_command_of_the_package():
    from gligabao.client import BearerToken, SigV4
    from gligabao.evals.client_api import client_api

    deployed = "https://abc123.execute-api.eu-west-1.amazonaws.com"

    assert isinstance(client_api(deployed, None).memory._http.auth, SigV4)
    assert isinstance(client_api(deployed, None, token="t").memory._http.auth, BearerToken)
    assert not client_api(deployed, None, token="t").names_user  # the token's subject is the user
    assert client_api(deployed, None).names_user
    assert client_api("http://127.0.0.1:7878", None).memory._http.auth is None
    assert isinstance(
        client_api("https://memory.example.com", "iam", region="eu-west-1").memory._http.auth, SigV4
    )
    with pytest.raises(ValueError, match="--auth jwt needs the bearer token in GB_API_TOKEN"):
        client_api(deployed, "jwt")
