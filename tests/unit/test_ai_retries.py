"""The retry policy of every provider call (ai/retries.py): what is retried, how long it waits,
how long an attempt may take, all before the deadline. Attempts here are plain functions, and the
module's clock is the test's (`clock`): its waits are recorded, not slept, and time passes only
when they or the attempts make it."""

from __future__ import annotations

import email.utils
import time
from dataclasses import replace

import pytest

from gligabao.ai import retries
from gligabao.ai.retries import (
    Failure,
    RetryPolicy,
    call_with_retries,
    current_attempt_deadline,
    retry_after_s,
    should_retry_status,
)
from gligabao.errors import ProviderError
from gligabao.limits import DEFAULT_LIMITS

POLICY = replace(RetryPolicy.for_llm(), backoff_base_s=0.01)


class Unavailable(Exception):
    """A failure the provider may get over (a 503, a reset)."""

    def __init__(self, retry_after_s: float | None = None):
        self.retry_after_s = retry_after_s


class Refused(Exception):
    """A failure that trying again cannot change (a 400)."""


def failure_of(error: Exception) -> Failure:
    if isinstance(error, Unavailable):
        return Failure("HTTP 503", retryable=True, retry_after_s=error.retry_after_s)
    if isinstance(error, Refused):
        return Failure("HTTP 400", retryable=False)
    raise error


class Clock:
    """ai/retries.py's `time`: `now` moves only when it sleeps (each wait recorded) or is moved."""

    def __init__(self, now: float = 1000.0):
        self.now = now
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    @staticmethod
    def time() -> float:  # the wall clock, for retry-after's HTTP dates
        return time.time()


@pytest.fixture(autouse=True)
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(retries, "time", clock)
    return clock


class Attempts:
    """An attempt function failing with `failures`, in order, then answering "ok"; each attempt
    takes `takes_s` of `clock`'s time."""

    def __init__(self, *failures: Exception, clock: Clock | None = None, takes_s: float = 0.0):
        self.failures = list(failures)
        self.timeouts: list[float] = []
        self.deadlines: list[float | None] = []
        self.clock, self.takes_s = clock, takes_s

    def __call__(self, timeout_s: float) -> str:
        self.timeouts.append(timeout_s)
        self.deadlines.append(current_attempt_deadline())
        if self.clock is not None:
            self.clock.now += self.takes_s
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def run(send, *, policy=POLICY, deadline=None):
    return call_with_retries(
        send, policy=policy, deadline=deadline, failure_of=failure_of, what="test call", secrets=()
    )


def test_the_defaults_are_three_attempts_and_two_seconds_kept_before_the_deadline():
    llm, embeddings = RetryPolicy.for_llm(), RetryPolicy.for_embeddings()
    assert (llm.max_attempts, llm.attempt_timeout_s, embeddings.attempt_timeout_s) == (3, 60.0, 10.0)
    assert (llm.deadline_margin_s, llm.min_attempt_s, llm.backoff_base_s, llm.max_wait_s) == (
        2.0,
        1.0,
        0.5,
        10.0,
    )


def test_the_policy_comes_from_the_limits():
    limits = DEFAULT_LIMITS.model_copy(update={"provider_max_attempts": 5, "llm_attempt_timeout_s": 20.0})
    assert (RetryPolicy.for_llm(limits).max_attempts, RetryPolicy.for_llm(limits).attempt_timeout_s) == (
        5,
        20.0,
    )


def test_an_attempt_takes_the_configured_timeout_or_the_time_left_less_the_margin():
    assert POLICY.attempt_timeout(None, now=100.0) == 60.0
    assert POLICY.attempt_timeout(200.0, now=100.0) == 60.0
    assert POLICY.attempt_timeout(129.0, now=100.0) == 27.0  # a Lambda of 29 s
    assert POLICY.attempt_timeout(103.0, now=100.0) == 1.0
    assert POLICY.attempt_timeout(102.9, now=100.0) is None  # less than a minimal attempt


def test_backoff_doubles_with_jitter_and_never_exceeds_the_longest_wait():
    policy = replace(POLICY, backoff_base_s=0.5, max_wait_s=10.0)
    for retry, full in [(1, 0.5), (2, 1.0), (3, 2.0), (10, 10.0)]:
        waits = [policy.backoff(retry) for _ in range(200)]
        assert all(full / 2 <= wait <= full for wait in waits)
        assert max(waits) - min(waits) > full / 10  # jittered, not one value


def test_a_wait_fits_when_a_minimal_attempt_and_the_margin_still_fit_after_it():
    assert POLICY.fits(5.0, deadline=108.0, now=100.0)  # 5 + 1 + 2 = 8
    assert not POLICY.fits(5.1, deadline=108.0, now=100.0)
    assert POLICY.fits(9.0, deadline=None, now=100.0)
    assert not POLICY.fits(10.5, deadline=None, now=100.0)  # longer than the longest wait


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "100", "retry-after": "30"}, 0.1),  # the precise one first
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, None),
        ({"retry-after-ms": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_milliseconds_or_seconds(headers, seconds):
    assert retry_after_s(headers) == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_may_be_an_http_date():
    in_ten_seconds = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert retry_after_s({"retry-after": in_ten_seconds}) == pytest.approx(10, abs=1.5)
    assert retry_after_s({"retry-after": email.utils.formatdate(time.time() - 60, usegmt=True)}) == 0.0


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_statuses_that_may_pass_on_their_own_are_retried(status):
    assert should_retry_status(status, {})


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_statuses_that_cannot_change_are_not_retried(status):
    assert not should_retry_status(status, {})


def test_the_providers_x_should_retry_header_wins():
    assert not should_retry_status(503, {"x-should-retry": "false"})
    assert should_retry_status(400, {"x-should-retry": "true"})


def test_a_call_is_retried_until_it_succeeds(clock):
    send = Attempts(Unavailable(), Unavailable())
    result = run(send)
    assert (result.value, result.attempts) == ("ok", 3)
    first, second = clock.sleeps  # the backoffs: 0.01 s then 0.02 s, each jittered down to half
    assert 0.005 <= first <= 0.01 and 0.01 <= second <= 0.02


def test_attempts_are_bounded_and_the_502_says_how_many_were_made():
    send = Attempts(*[Unavailable()] * 5)
    with pytest.raises(ProviderError) as raised:
        run(send)
    assert raised.value.status == 502
    assert raised.value.message == "test call failed: HTTP 503 after 3 attempts"
    assert len(send.timeouts) == 3


def test_a_failure_that_cannot_change_is_not_retried():
    send = Attempts(Refused())
    with pytest.raises(ProviderError, match=r"^test call failed: HTTP 400$"):
        run(send)
    assert len(send.timeouts) == 1


def test_a_reply_that_is_not_what_the_protocol_promises_is_final():
    send = Attempts(ProviderError("reply was not JSON"))
    with pytest.raises(ProviderError, match=r"^reply was not JSON$"):
        run(send)
    assert len(send.timeouts) == 1


def test_a_bug_is_not_taken_for_a_provider_failure():
    send = Attempts(KeyError("oops"))
    with pytest.raises(KeyError):
        run(send)


def test_the_providers_retry_after_is_honoured_when_it_fits(clock):
    send = Attempts(Unavailable(retry_after_s=0.3))
    assert run(send, deadline=clock.now + 10).attempts == 2
    assert clock.sleeps == [0.3]  # what it asked for, not the backoff


def test_a_retry_after_past_the_deadline_fails_the_call_at_once(clock):
    send = Attempts(Unavailable(retry_after_s=30))
    with pytest.raises(ProviderError) as raised:
        run(send, deadline=clock.now + 20)
    assert clock.sleeps == []  # no wait at all: neither the 30 s nor a backoff
    assert raised.value.message == (
        "test call failed: HTTP 503; it asked to retry after 30 s, no time left to retry"
    )
    assert len(send.timeouts) == 1


def test_no_attempt_is_made_without_time_for_a_minimal_one(clock):
    send = Attempts()
    with pytest.raises(ProviderError, match=r"^test call not made: no time left before the deadline$"):
        run(send, deadline=clock.now + 2.5)
    assert send.timeouts == [] and clock.sleeps == []


def test_each_attempt_gets_the_time_left_less_the_margin_and_runs_under_its_own_deadline(clock):
    send = Attempts(Unavailable(), clock=clock, takes_s=3.0)  # the first attempt fails after 3 s
    deadline = clock.now + 10
    run(send, deadline=deadline)
    [wait] = clock.sleeps
    # 10 s less the 2 s margin; then 3 s and the wait less
    assert send.timeouts == [8.0, pytest.approx(5.0 - wait)]
    assert send.deadlines == [deadline - 2.0, pytest.approx(deadline - 2.0)]  # each ends 2 s before
    assert current_attempt_deadline() is None  # cleared after the call


def test_the_keys_of_the_call_are_redacted_from_what_a_failure_says():
    def quoting(error: Exception) -> Failure:
        return Failure("HTTP 401 invalid_key gw-key-123 (request req_gw-key-123)", retryable=False)

    with pytest.raises(ProviderError) as raised:
        call_with_retries(
            Attempts(Refused()),
            policy=POLICY,
            deadline=None,
            failure_of=quoting,
            what="test call",
            secrets=("gw-key-123", None),
        )

    assert (
        raised.value.message == "test call failed: HTTP 401 invalid_key [REDACTED] (request req_[REDACTED])"
    )
