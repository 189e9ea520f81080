"""Provider faults, injected by the fake servers under the real SDKs, for the Messages API and the
Embeddings API alike: each call ends in a success (after retries) or a clear 502, within its
deadline, with exactly one inference recorded (ai/retries.py). How long calls wait is asserted on
what they were given and scheduled (fakes/attempt_log.py: each attempt's timeout, each socket
operation's, each wait before a retry), not on how long they took on this machine."""

from __future__ import annotations

import base64
import json
import math
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from conftest import reconfigure
from fakes.attempt_log import AttemptLog
from fakes.fake_http import FakeServer, Fault
from pydantic import BaseModel

from gligabao import bootstrap
from gligabao.errors import ProviderError
from gligabao.limits import DEFAULT_LIMITS
from gligabao.observability.inferences import CallContext

TEXTS = ["Alice", "Acme", "Alice works at Acme."]


class Facts(BaseModel):
    facts: list[dict]


ALICE_AT_ACME = {"facts": [{"source": "Alice", "target": "Acme", "relation": "works_at"}]}


@dataclass
class Provider:
    """One of the two APIs: its fake server, and one call of our client to it."""

    name: str
    server: FakeServer
    make_call: Callable[[CallContext, float | None], object]
    what: str  # how its 502s begin

    def call(self, call: CallContext, deadline: float | None = None):
        return self.make_call(call, deadline)

    @property
    def attempts(self) -> int:
        return len(self.server.requests)


@pytest.fixture(params=["messages", "embeddings"])
def provider(request, fake_anthropic, fake_openai) -> Provider:
    if request.param == "messages":
        fake_anthropic.responder = lambda body: ALICE_AT_ACME

        def complete(call, deadline):
            return bootstrap.bundle().llm.complete(
                call,
                "extract",
                system="Extract.",
                content="Alice works at Acme.",
                reply_model=Facts,
                deadline=deadline,
            )

        _ = bootstrap.bundle().llm.client  # the SDK imported and its client built before any timing
        return Provider("messages", fake_anthropic, complete, "LLM call of stage extract")

    def embed(call, deadline):
        return bootstrap.bundle().embedder.embed(call, TEXTS, deadline=deadline)

    _ = bootstrap.bundle().embedder.client
    return Provider("embeddings", fake_openai, embed, "embeddings call")


@pytest.fixture
def call() -> CallContext:
    return CallContext(user_id="u1", type="remember")


@pytest.fixture
def short_attempts():
    """Attempts of half a second, so the faults that hang are quick to test."""
    limits = DEFAULT_LIMITS.model_copy(
        update={"llm_attempt_timeout_s": 0.5, "embeddings_attempt_timeout_s": 0.5}
    )
    reconfigure(limits=limits)


def succeeded(provider: Provider, result) -> bool:
    if provider.name == "messages":
        return result == Facts(**ALICE_AT_ACME)
    return len(result) == len(TEXTS) and all(len(vector) == 1536 for vector in result)


def assert_one_inference(call: CallContext, ok: bool, error: str | None = None) -> None:
    [inference] = call.inferences
    assert inference.ok is ok
    if error is not None:
        assert error in inference.error


@pytest.fixture
def attempts(monkeypatch) -> AttemptLog:
    return AttemptLog(monkeypatch)


def outcome(function):
    """What the call returned, or the ProviderError it raised."""
    try:
        return function()
    except ProviderError as error:
        return error


# --- statuses -----------------------------------------------------------------------------------


def test_a_rate_limit_honours_retry_after_then_succeeds(provider, call, attempts):
    provider.server.inject(Fault.error(429, retry_after="1"))

    result = outcome(lambda: provider.call(call, time.monotonic() + 10))

    assert succeeded(provider, result)
    assert provider.attempts == 2
    assert attempts.waits == [1.0]  # waited the asked second, not a backoff or an attempt's timeout
    assert_one_inference(call, ok=True)


def test_a_rate_limit_honours_retry_after_ms(provider, call, attempts):
    provider.server.inject(Fault.error(429, retry_after_ms="300"))

    result = outcome(lambda: provider.call(call))

    assert succeeded(provider, result)
    assert attempts.waits == [0.3]


def test_a_retry_after_longer_than_the_time_left_is_a_502_at_once(provider, call, attempts):
    provider.server.inject(Fault.error(429, retry_after="30"))

    error = outcome(lambda: provider.call(call, time.monotonic() + 25))

    assert isinstance(error, ProviderError) and error.status == 502
    assert error.message.startswith(f"{provider.what} failed: HTTP 429")
    assert "asked to retry after 30 s, no time left to retry" in error.message
    assert attempts.waits == []  # at once: not after the asked 30 s
    assert provider.attempts == 1
    assert_one_inference(call, ok=False, error="HTTP 429")


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529, 408, 409])
def test_a_passing_failure_is_retried_then_succeeds(provider, call, status):
    provider.server.inject(Fault.error(status))

    result = outcome(lambda: provider.call(call))

    assert succeeded(provider, result)
    assert provider.attempts == 2
    assert_one_inference(call, ok=True)


@pytest.mark.parametrize("status", [500, 503, 529])
def test_a_provider_failing_every_time_is_a_502_after_three_attempts(provider, call, attempts, status):
    provider.server.inject(Fault.error(status), times=10)

    error = outcome(lambda: provider.call(call, time.monotonic() + 20))

    assert isinstance(error, ProviderError)
    assert error.message.startswith(f"{provider.what} failed: HTTP {status}")
    assert error.message.endswith("after 3 attempts")
    assert provider.attempts == 3
    assert attempts.waits == [0.001, 0.001]  # twice what the fakes' errors ask for (retry-after-ms: 1)
    assert_one_inference(call, ok=False, error=f"HTTP {status}")


def test_a_5xx_whose_body_is_a_gateways_html_page_is_retried(provider, call):
    provider.server.inject(Fault.body("<html><body>502 Bad Gateway</body></html>", status=502))

    result = outcome(lambda: provider.call(call))

    assert succeeded(provider, result)
    assert provider.attempts == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_a_request_the_provider_refuses_is_not_retried(provider, call, status):
    provider.server.inject(Fault.error(status), times=3)

    error = outcome(lambda: provider.call(call))

    assert isinstance(error, ProviderError) and f"HTTP {status}" in error.message
    assert provider.attempts == 1
    assert_one_inference(call, ok=False)


def test_the_providers_x_should_retry_false_is_obeyed(provider, call):
    provider.server.inject(Fault.error(503, x_should_retry="false"))

    error = outcome(lambda: provider.call(call))

    assert isinstance(error, ProviderError)
    assert provider.attempts == 1


# --- the connection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [Fault.reset(), Fault.cut(at=30, reset=True), Fault.cut(at=30), Fault.cut(at=0)],
    ids=["reset-before-reply", "reset-mid-reply", "closed-mid-body", "closed-after-headers"],
)
def test_a_broken_connection_is_retried_then_succeeds(provider, call, fault):
    provider.server.inject(fault)

    result = outcome(lambda: provider.call(call))

    assert succeeded(provider, result)
    assert provider.attempts == 2
    assert_one_inference(call, ok=True)


def test_a_connection_broken_every_time_is_a_502_naming_it(provider, call):
    provider.server.inject(Fault.reset(), times=3)

    error = outcome(lambda: provider.call(call))

    assert isinstance(error, ProviderError)
    assert error.message.startswith(f"{provider.what} failed: the connection broke")
    assert error.message.endswith("after 3 attempts")
    assert_one_inference(call, ok=False, error="the connection broke")


def test_a_server_that_never_answers_times_out_on_each_attempt(provider, call, short_attempts, attempts):
    provider.server.inject(Fault.never_answer(), times=3)

    error = outcome(lambda: provider.call(call))

    assert isinstance(error, ProviderError)
    assert error.message == f"{provider.what} failed: timed out after 3 attempts"
    assert provider.attempts == 3
    # three short attempts (not the default 60 s or 10 s), each cut at its end, and two backoffs
    made = attempts.made()
    assert [attempt.timeout for attempt in made] == [0.5] * 3
    for attempt in made:
        attempts.assert_bounded(attempt)
    first, second = attempts.waits  # 0.5 s then 1 s, each jittered down to half at most
    assert 0.25 <= first <= 0.5 and 0.5 <= second <= 1.0
    assert_one_inference(call, ok=False, error="timed out")


def test_a_server_that_hangs_once_is_retried(provider, call, short_attempts):
    provider.server.inject(Fault.never_answer())

    result = outcome(lambda: provider.call(call))

    assert succeeded(provider, result)
    assert provider.attempts == 2


def assert_cut_to_the_deadline_less_the_margin(attempts: AttemptLog, deadline: float) -> None:
    """One attempt, its timeout (the SDK's) the time left before `deadline` less the 2 s margin,
    no socket operation able to outlast it; no time left after it to schedule a retry."""
    [attempt] = attempts.made()
    assert attempt.call_deadline == deadline
    assert attempt.timeout == pytest.approx(deadline - attempt.asked_at - 2.0)  # not 60 s or 10 s
    assert attempt.ends_by < deadline - 1.0  # the margin left, within the deadline
    attempts.assert_bounded(attempt)
    assert attempts.waits == []


def test_a_hanging_server_is_given_up_before_the_deadline_less_the_margin(provider, call, attempts):
    # The default attempt timeout (60 s, 10 s) is cut to the time left, 4 s less the 2 s margin.
    provider.server.inject(Fault.never_answer(), times=3)
    deadline = time.monotonic() + 4

    error = outcome(lambda: provider.call(call, deadline))

    assert isinstance(error, ProviderError)
    assert error.message == f"{provider.what} failed: timed out, no time left to retry"
    assert_cut_to_the_deadline_less_the_margin(attempts, deadline)
    assert provider.attempts == 1  # no time left for another
    assert_one_inference(call, ok=False)


def test_a_server_trickling_its_reply_is_cut_at_the_attempts_deadline(provider, call, attempts):
    # Each byte comes well within any read timeout, but the whole reply would take minutes.
    provider.server.inject(Fault.trickle(every_s=0.1), times=3)
    deadline = time.monotonic() + 4

    error = outcome(lambda: provider.call(call, deadline))

    assert isinstance(error, ProviderError)
    assert error.message == f"{provider.what} failed: timed out, no time left to retry"
    assert_cut_to_the_deadline_less_the_margin(attempts, deadline)  # each read bounded by what is left
    assert_one_inference(call, ok=False)


# --- a 200 whose body is not what the protocol promises ------------------------------------------


def normal_body(provider: Provider) -> bytes:
    if provider.name == "messages":
        return json.dumps(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": json.dumps(ALICE_AT_ACME)}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        ).encode()
    vector = [{"object": "embedding", "index": i, "embedding": [0.0] * 1536} for i in range(len(TEXTS))]
    return json.dumps({"object": "list", "data": vector, "usage": {"prompt_tokens": 3}}).encode()


def test_the_normal_body_used_below_is_accepted(provider, call):
    provider.server.inject(Fault.body(normal_body(provider)))

    assert succeeded(provider, provider.call(call))


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (lambda normal: normal[: len(normal) // 2], "not JSON"),
        (lambda normal: b"<html><body>Service Unavailable</body></html>", "not JSON"),
        (lambda normal: b"", "not JSON"),
        (lambda normal: b"\xff\xfe\x00garbage", "not JSON"),
        (lambda normal: b"[1, 2, 3]", "Input should be a valid dictionary"),
        (lambda normal: b'{"unexpected": true}', "Field required"),
        (lambda normal: b"null", "Input should be a valid dictionary"),
    ],
    ids=["truncated", "html", "empty", "binary", "array", "other-object", "null"],
)
def test_a_200_whose_body_is_not_a_reply_is_a_502_not_retried(provider, call, body, problem):
    provider.server.inject(Fault.body(body(normal_body(provider))), times=3)

    error = outcome(lambda: provider.call(call))

    assert isinstance(error, ProviderError) and error.status == 502
    assert "was not a" in error.message and problem in error.message
    assert provider.attempts == 1  # the provider answered (and billed): not asked again
    assert_one_inference(call, ok=False, error=problem)


# --- the Messages API's own broken replies -----------------------------------------------------


def message(**fields) -> bytes:
    reply = {
        "type": "message",
        "content": [{"type": "text", "text": json.dumps(ALICE_AT_ACME)}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return json.dumps({**reply, **fields}).encode()


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            message(content="Alice works at Acme"),
            "was not a Messages API reply: content: Input should be a valid list",
        ),
        (message(content=[{"text": "{}"}]), "content.0.type: Field required"),
        (message(content=[{"type": "text", "text": 42}]), "content.0.text: Input should be a valid string"),
        (message(usage={"input_tokens": "many", "output_tokens": 5}), "usage.input_tokens"),
        (message(usage={"input_tokens": -1, "output_tokens": 5}), "usage.input_tokens"),
        (message(stop_reason=None, content=[]), "was empty"),
        (message(content=[{"type": "text", "text": "  "}]), "was empty"),
        (message(content=[{"type": "thinking", "thinking": "hmm"}]), "was empty"),
        (
            message(stop_reason="refusal", stop_details={"category": "cyber"}),
            "refused to answer stage extract (cyber)",
        ),
        (message(stop_reason="max_tokens"), "was truncated (max_tokens)"),
        (message(stop_reason="model_context_window_exceeded"), "was truncated"),
        (message(content=[{"type": "text", "text": "Sorry, no."}]), "was not JSON"),
        (message(content=[{"type": "text", "text": '{"facts": "none"}'}]), "did not fit its schema"),
    ],
    ids=[
        "content-not-a-list",
        "block-without-type",
        "text-not-a-string",
        "tokens-not-a-number",
        "tokens-negative",
        "no-content",
        "blank-text",
        "thinking-only",
        "refusal",
        "max-tokens",
        "context-window",
        "prose",
        "wrong-reply-schema",
    ],
)
def test_a_broken_messages_reply_is_a_502_naming_the_problem(fake_anthropic, call, body, problem):
    fake_anthropic.inject(Fault.body(body))

    with pytest.raises(ProviderError) as raised:
        bootstrap.bundle().llm.complete(
            call, "extract", system="Extract.", content="Alice.", reply_model=Facts
        )

    assert problem in raised.value.message
    assert len(fake_anthropic.requests) == 1
    assert_one_inference(call, ok=False, error=problem)


def test_a_broken_reply_that_had_usage_still_records_its_tokens(fake_anthropic, call):
    fake_anthropic.inject(
        Fault.body(message(stop_reason="max_tokens", usage={"input_tokens": 7, "output_tokens": 9}))
    )

    with pytest.raises(ProviderError):
        bootstrap.bundle().llm.complete(
            call, "extract", system="Extract.", content="Alice.", reply_model=Facts
        )

    [inference] = call.inferences
    assert (inference.input_tokens, inference.output_tokens, inference.ok) == (7, 9, False)


# --- the Embeddings API's own broken replies ---------------------------------------------------


def vectors_reply(*embeddings, usage=None) -> bytes:
    data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(embeddings)]
    return json.dumps({"object": "list", "data": data, "usage": usage or {"prompt_tokens": 3}}).encode()


GOOD = [0.5] * 8


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (vectors_reply(GOOD, ["0.5"] * 8, GOOD), "data.1.embedding"),
        (vectors_reply(GOOD, [None] * 8, GOOD), "data.1.embedding"),
        (vectors_reply(GOOD, None, GOOD), "data.1.embedding"),
        (vectors_reply(GOOD, [True] * 8, GOOD), "data.1.embedding"),
        (vectors_reply(GOOD, [0.5] * 7 + [{"x": 1}], GOOD), "data.1.embedding"),
        (vectors_reply(GOOD, GOOD, GOOD).replace(b"0.5]", b"NaN]", 1), "data.0.embedding"),
        (vectors_reply(GOOD, GOOD, GOOD).replace(b"0.5]", b"Infinity]", 1), "data.0.embedding"),
        (vectors_reply(GOOD, GOOD), "held 2 vectors for 3 texts"),
        (vectors_reply(GOOD, GOOD, GOOD, GOOD), "held 4 vectors for 3 texts"),
        (vectors_reply(GOOD, [0.5] * 7, GOOD), "had 7 dimensions, expected 8"),
        (vectors_reply(GOOD, [], GOOD), "had 0 dimensions, expected 8"),
        (vectors_reply(GOOD, "not base64!", GOOD), "vector 1 is not base64"),
        (vectors_reply(GOOD, "AAAAAA==", GOOD), "had 1 dimensions, expected 8"),
        (vectors_reply(GOOD, "AAAA", GOOD), "vector 1 is not a whole number of float32"),
        (vectors_reply(GOOD, "AAAA=AAA", GOOD), "vector 1 is not base64"),
        (vectors_reply(GOOD, GOOD, GOOD, usage={"prompt_tokens": "three"}), "usage.prompt_tokens"),
        (
            vectors_reply(GOOD, GOOD, GOOD, usage=None).replace(b', "usage": {"prompt_tokens": 3}', b""),
            "usage",
        ),
    ],
    ids=[
        "strings",
        "nulls",
        "null-vector",
        "booleans",
        "object-in-vector",
        "nan",
        "infinity",
        "too-few",
        "too-many",
        "short-vector",
        "empty-vector",
        "base64-garbage",
        "base64-one-float",
        "base64-three-bytes",
        "base64-padding-inside",
        "usage-not-a-number",
        "no-usage",
    ],
)
def test_a_broken_embeddings_reply_is_a_502_naming_the_problem(fake_openai, call, body, problem):
    reconfigure(embedding_dimensions="8")
    fake_openai.inject(Fault.body(body))

    with pytest.raises(ProviderError) as raised:
        bootstrap.bundle().embedder.embed(call, TEXTS)

    assert problem in raised.value.message
    assert len(fake_openai.requests) == 1
    assert_one_inference(call, ok=False, error=problem)


def test_a_base64_vector_of_nan_is_a_502(fake_openai, call):
    reconfigure(embedding_dimensions="2")
    nan_pair = "AADAfwAAwH8="  # two float32 NaN, little-endian
    fake_openai.inject(Fault.body(vectors_reply([0.1, 0.2], nan_pair, [0.3, 0.4])))

    with pytest.raises(ProviderError, match="vector 1 holds a value that is not a finite number"):
        bootstrap.bundle().embedder.embed(call, TEXTS)


@pytest.mark.parametrize(
    "pair",
    [(math.inf, 0.5), (-math.inf, 0.5), (math.inf, -math.inf)],
    ids=["infinity", "minus-infinity", "infinities-of-both-signs"],
)
def test_a_base64_vector_holding_an_infinity_is_a_502(fake_openai, call, pair):
    reconfigure(embedding_dimensions="2")
    fake_openai.inject(Fault.body(vectors_reply([0.1, 0.2], _base64_float32(*pair), [0.3, 0.4])))

    with pytest.raises(ProviderError, match="vector 1 holds a value that is not a finite number"):
        bootstrap.bundle().embedder.embed(call, TEXTS)


def test_a_base64_vector_of_the_largest_float32s_is_read(fake_openai, call):
    reconfigure(embedding_dimensions="2")
    largest = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
    fake_openai.inject(Fault.body(vectors_reply([0.1, 0.2], _base64_float32(largest, largest), [0.3, 0.4])))

    vectors = bootstrap.bundle().embedder.embed(call, TEXTS)

    assert vectors[1] == [largest, largest]


def _base64_float32(*values: float) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def test_vectors_given_as_numbers_rather_than_base64_are_read(fake_openai, call):
    reconfigure(embedding_dimensions="8")
    fake_openai.inject(Fault.body(vectors_reply(GOOD, [1, 0, 0, 0, 0, 0, 0, 0], GOOD)))

    vectors = bootstrap.bundle().embedder.embed(call, TEXTS)

    assert vectors[1] == [1.0, 0, 0, 0, 0, 0, 0, 0]
    assert_one_inference(call, ok=True)


def test_the_embeddings_request_asks_for_base64(fake_openai, call):
    bootstrap.bundle().embedder.embed(call, TEXTS)

    assert fake_openai.embedding_requests[-1]["encoding_format"] == "base64"
