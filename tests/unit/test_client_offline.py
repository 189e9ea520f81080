"""gligabao.client without a server: what importing it loads, the SigV4 and bearer headers it
sends (botocore with fixed fake credentials, checked against the algorithm computed here), the
errors it makes of API answers, and its retry policy. Requests go to httpx2's MockTransport."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from botocore.credentials import Credentials

from gligabao.client import (
    ApiError,
    BearerToken,
    ConflictError,
    GatewayTimeoutError,
    GligabaoError,
    InternalServerError,
    Memory,
    NotFoundError,
    RateLimitError,
    Retries,
    SigV4,
    UnexpectedResponseError,
)
from gligabao.client.auth import region_of_url

LAYER = Path(__file__).resolve().parents[2] / "layers" / "core"
API_URL = "https://abc123.execute-api.eu-west-1.amazonaws.com"
FAKE = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token-example")


class Recorder:
    """A MockTransport that records the requests and answers from a list (then 200 {})."""

    def __init__(self, *answers: tuple[int, dict, dict]):
        self.requests: list[httpx2.Request] = []
        self.answers = list(answers)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        self.requests.append(request)
        status, body, headers = self.answers.pop(0) if self.answers else (200, {"datasets": []}, {})
        return httpx2.Response(status, json=body, headers=headers)


def client(recorder: Recorder, **kwargs) -> Memory:
    kwargs.setdefault("retries", Retries(max_retries=2))
    return Memory(
        kwargs.pop("url", API_URL),
        user_id="u1",
        transport=httpx2.MockTransport(recorder),
        sleep=kwargs.pop("sleep", lambda _: None),
        **kwargs,
    )


def test_importing_the_client_loads_neither_the_server_nor_powertools():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, gligabao.client; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(LAYER), "PATH": ""},
    ).stdout.split()
    server = [
        name
        for name in loaded
        if name.split(".")[0] in ("aws_lambda_powertools", "psycopg", "boto3", "anthropic", "openai")
        or name.startswith(("gligabao.memory", "gligabao.db", "gligabao.bootstrap", "gligabao.settings"))
        or name in ("gligabao.api.deps", "gligabao.api.app")
    ]
    assert "gligabao.api.query_models" in loaded
    assert server == []


def _sigv4_signature(request: httpx2.Request, region: str, secret: str) -> str:
    """The SigV4 signature of a request signed on host and x-amz-date (+ the token), by the book."""
    date = request.headers["X-Amz-Date"]
    signed = sorted(
        name for name in ("host", "x-amz-date", "x-amz-security-token") if name in request.headers
    )
    encoded_path = request.url.raw_path.decode().split("?")[0]
    path = quote(encoded_path, safe="/~")  # execute-api: the path as sent, encoded once more
    query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
        for k, v in sorted(request.url.params.multi_items())
    )
    canonical = "\n".join(
        [
            request.method,
            path,
            query,
            "".join(f"{name}:{request.headers[name].strip()}\n" for name in signed),
            ";".join(signed),
            hashlib.sha256(request.content).hexdigest(),
        ]
    )
    scope = f"{date[:8]}/{region}/execute-api/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = f"AWS4{secret}".encode()
    for part in (date[:8], region, "execute-api", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_sigv4_signs_with_the_callers_credentials_for_execute_api_in_the_urls_region():
    recorder = Recorder(
        (200, {"datasets": []}, {}),
        (200, {"answer": "x", "evidence": {"entities": [], "edges": [], "passages": []}}, {}),
    )
    memory = client(recorder, auth=SigV4(credentials=FAKE))

    memory.datasets()
    memory.query("Where does Alice work?")

    for request in recorder.requests:
        authorization = request.headers["Authorization"]
        date = request.headers["X-Amz-Date"]
        assert authorization.startswith(
            f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{date[:8]}/eu-west-1/execute-api/aws4_request, "
        )
        assert "SignedHeaders=host;x-amz-date;x-amz-security-token, " in authorization
        assert len(date) == 16 and date.endswith("Z")
        assert request.headers["X-Amz-Security-Token"] == "session-token-example"
        signature = authorization.rsplit("Signature=", 1)[1]
        assert signature == _sigv4_signature(request, "eu-west-1", FAKE.secret_key)


def test_sigv4_signs_a_percent_encoded_path_and_signs_each_retry_anew():
    page = {
        "session_id": "chat/42",
        "dataset": "main",
        "artifacts": [],
        "entities": [],
        "edges": [],
        "next_cursor": None,
    }
    recorder = Recorder((503, {"error": "busy"}, {}), (200, page, {}))
    memory = client(recorder, auth=SigV4(region="us-east-2", credentials=Credentials("AKID", "secret")))

    memory.session("chat/42")

    first, second = recorder.requests
    assert first.url.raw_path.startswith(b"/v1/gb/sessions/chat%2F42?")
    for request in (first, second):
        assert "X-Amz-Security-Token" not in request.headers
        assert (
            "/us-east-2/execute-api/aws4_request, SignedHeaders=host;x-amz-date, "
            in request.headers["Authorization"]
        )
        assert request.headers["Authorization"].endswith(_sigv4_signature(request, "us-east-2", "secret"))


def test_the_region_comes_from_an_execute_api_url_or_must_be_given():
    assert region_of_url(API_URL + "/prod") == "eu-west-1"
    assert region_of_url("https://memory.example.com") is None
    memory = client(Recorder(), url="https://memory.example.com", auth=SigV4(credentials=FAKE))
    memory._http.auth._botocore_session = lambda: type(
        "NoRegion", (), {"get_config_variable": lambda s, n: None}
    )()

    with pytest.raises(GligabaoError, match="region"):
        memory.datasets()


def test_a_bearer_token_is_sent_as_is_or_fresh_from_a_callable():
    recorder = Recorder()
    tokens = iter(["t1", "t2"])
    client(recorder, auth="abc.def.ghi").datasets()
    client(recorder, auth=BearerToken(lambda: next(tokens))).datasets()
    client(recorder).datasets()

    assert [r.headers.get("Authorization") for r in recorder.requests] == [
        "Bearer abc.def.ghi",
        "Bearer t1",
        None,
    ]
    assert "abc" not in repr(BearerToken("abc.def.ghi"))


def test_each_status_is_its_own_error_with_the_apis_text():
    cases = [
        (404, {"error": "the dataset does not exist for this user"}, NotFoundError),
        (409, {"error": "Idempotency-Key was already used with another request body"}, ConflictError),
        (429, {"message": "Too Many Requests"}, RateLimitError),
        (504, {"message": "Endpoint request timed out"}, GatewayTimeoutError),
        (500, {"error": "internal error"}, InternalServerError),
        (418, {"error": "teapot"}, ApiError),
    ]
    for status, body, kind in cases:
        recorder = Recorder(*[(status, body, {})] * 3)
        with pytest.raises(kind) as raised:
            client(recorder, retries=0).datasets()
        assert raised.value.status == status
        assert raised.value.error == next(iter(body.values()))
        assert str(status) in str(raised.value) and "user_id" not in str(raised.value)


def test_retry_after_is_honoured_and_backoff_grows_within_its_cap():
    waits: list[float] = []
    recorder = Recorder((429, {"message": "slow down"}, {"Retry-After": "2"}), (503, {"error": "x"}, {}))
    client(
        recorder, sleep=waits.append, retries=Retries(max_retries=2, base_delay_s=1, max_delay_s=4)
    ).datasets()

    assert len(recorder.requests) == 3
    assert waits[0] == 2.0 and 0 <= waits[1] <= 2.0
    policy = Retries(base_delay_s=1, max_delay_s=4)
    assert all(0 <= policy.delay(attempt, None) <= 4 for attempt in range(10))
    assert policy.delay(0, 999) == policy.max_retry_after_s


# What a remember of a text that stated nothing answers.
STORED_REMEMBER = {
    "user_id": "u1",
    "dataset": "main",
    "kind": "knowledge",
    "artifact_id": 1,
    "valid_at": "2025-01-31T09:00:00Z",
    "created_at": "2025-01-31T09:00:01Z",
    "entities": [],
    "edges": [],
    "superseded": [],
    "invalidated_edges": [],
    "embedded_entities": 0,
    "embedded_edges": 0,
    "remember_run_id": 1,
    "chunk_count": 0,
    "chunks": [],
}


def test_a_remember_sends_a_generated_key_reused_by_its_retries_and_none_when_told():
    stored = STORED_REMEMBER
    recorder = Recorder(
        (502, {"error": "lost"}, {}), (200, stored, {}), (200, stored, {}), (503, {"error": "x"}, {})
    )
    memory = client(recorder)

    memory.remember("Alice works at Acme.")
    memory.remember("Alice works at Acme.")
    with pytest.raises(GligabaoError):
        memory.remember("Alice works at Acme.", idempotency_key=None)

    keys = [r.headers.get("Idempotency-Key") for r in recorder.requests]
    assert keys[0] == keys[1] and keys[0] is not None and keys[2] not in (None, keys[0])
    assert keys[3] is None and len(keys) == 4  # without a key: no retry
    assert json.loads(recorder.requests[0].content) == {
        "user_id": "u1",
        "text": "Alice works at Acme.",
        "dataset": "main",
    }


def test_a_remember_still_running_under_its_key_is_retried_after_the_time_asked():
    stored = STORED_REMEMBER
    waits: list[float] = []
    recorder = Recorder((409, {"error": "still in progress"}, {"Retry-After": "1"}), (200, stored, {}))

    client(recorder, sleep=waits.append).remember("Alice works at Acme.", idempotency_key="k1")

    assert waits == [1.0] and len(recorder.requests) == 2


def test_a_success_answer_that_is_not_the_routes_model_is_an_unexpected_response():
    with pytest.raises(UnexpectedResponseError, match="not a SessionReadback"):
        client(Recorder((200, {"hello": "world"}, {}))).session("s")


def test_a_naive_datetime_is_refused_before_anything_is_sent():
    from datetime import datetime

    recorder = Recorder()
    with pytest.raises(ValueError, match="timezone"):
        client(recorder).remember("Alice works at Acme.", reference_time=datetime(2025, 1, 1))
    assert recorder.requests == []


def test_command_options_choose_the_authentication_and_need_a_user():
    from gligabao.client.options import ClientOptions, OptionError

    signed = ClientOptions(api=API_URL, user_id="u1").memory()
    bearer = ClientOptions(api=API_URL, token="abc").memory()
    local = ClientOptions(user_id="u1", dataset="work").memory()

    assert isinstance(signed._http.auth, SigV4)
    assert isinstance(bearer._http.auth, BearerToken) and bearer.user_id is None
    assert local._http.auth is None and (local.url, local.dataset) == ("http://127.0.0.1:7878", "work")
    with pytest.raises(OptionError, match="user-id"):
        ClientOptions(api=API_URL).memory()
    with pytest.raises(OptionError, match="GB_API_TOKEN"):
        ClientOptions(auth="jwt", user_id="u1").memory()
