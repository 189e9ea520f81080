"""One retry policy for every model provider call (the LLM and the embeddings), inside the deadline.

The SDKs' own retries are off (`max_retries=0`): they retry a timeout with the whole per-attempt
timeout again and sleep whatever `retry-after` says, so a slow provider could run a call past the
Lambda's end, and then neither the 502 nor the call's inference row would be written. Here:

* a call is at most `max_attempts` attempts; only what may succeed on its own is retried: 408,
  409, 429, 5xx (529 overloaded included), timeouts and broken connections, or whatever the
  provider's `x-should-retry` header says;
* between attempts, exponential backoff with jitter, or the provider's `retry-after-ms` /
  `retry-after` when it gives one, but only if that wait and a minimal attempt still fit before
  the deadline: else the call fails now, with the time left to record it and answer 502;
* each attempt's timeout is the configured one, or the time left before the deadline less the
  margin when that is shorter, and it bounds every socket operation of the attempt
  (`attempt_deadline`, read by ai/transport.py), so a provider that trickles bytes is cut too.

What a failed attempt says (its status, the provider's error type and request id) becomes the
502's message, the inference row's error and the retry's log line here, and only here: the
provider's keys the call was made with are redacted from it first (a provider or a proxy may quote
the key it received anywhere in its error).
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gligabao.errors import ProviderError
from gligabao.limits import DEFAULT_LIMITS, Limits
from gligabao.observability.logging import REDACTED, get_logger

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429})  # and every 5xx

# The monotonic instant the current thread's attempt must end by (None: no attempt running).
_attempt_deadline: ContextVar[float | None] = ContextVar("gligabao_attempt_deadline", default=None)


def current_attempt_deadline() -> float | None:
    return _attempt_deadline.get()


@contextmanager
def attempt_deadline(instant: float) -> Iterator[None]:
    token = _attempt_deadline.set(instant)
    try:
        yield
    finally:
        _attempt_deadline.reset(token)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int
    attempt_timeout_s: float  # one attempt at most, when the deadline leaves more
    backoff_base_s: float  # before the first retry; doubled for each retry after it
    max_wait_s: float  # the longest wait before a retry, retry-after included
    min_attempt_s: float  # an attempt with less time than this is not made
    deadline_margin_s: float  # kept after the last attempt, to record the failure and answer

    @classmethod
    def for_llm(cls, limits: Limits = DEFAULT_LIMITS) -> RetryPolicy:
        return cls._of(limits, limits.llm_attempt_timeout_s)

    @classmethod
    def for_embeddings(cls, limits: Limits = DEFAULT_LIMITS) -> RetryPolicy:
        return cls._of(limits, limits.embeddings_attempt_timeout_s)

    @classmethod
    def _of(cls, limits: Limits, attempt_timeout_s: float) -> RetryPolicy:
        return cls(
            max_attempts=limits.provider_max_attempts,
            attempt_timeout_s=attempt_timeout_s,
            backoff_base_s=limits.provider_backoff_base_s,
            max_wait_s=limits.provider_max_wait_s,
            min_attempt_s=limits.provider_min_attempt_s,
            deadline_margin_s=limits.provider_deadline_margin_s,
        )

    def attempt_timeout(self, deadline: float | None, now: float) -> float | None:
        """This attempt's timeout; None when too little time is left to make one."""
        if deadline is None:
            return self.attempt_timeout_s
        left = deadline - now - self.deadline_margin_s
        return min(self.attempt_timeout_s, left) if left >= self.min_attempt_s else None

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (1 for the first): exponential, with jitter between
        half and all of it, so clients failing together do not retry together."""
        full = min(self.backoff_base_s * 2 ** (retry - 1), self.max_wait_s)
        return full * random.uniform(0.5, 1.0)

    def fits(self, wait: float, deadline: float | None, now: float) -> bool:
        """Whether a retry after `wait` still leaves a minimal attempt and the margin."""
        if wait > self.max_wait_s:
            return False
        return deadline is None or now + wait + self.min_attempt_s + self.deadline_margin_s <= deadline


@dataclass(frozen=True)
class Failure:
    """What one failed attempt says: its reason for the 502, and whether to try again."""

    reason: str  # e.g. "HTTP 529 overloaded_error (request req_1)"; never a prompt or a key
    retryable: bool
    retry_after_s: float | None = None  # what the provider asked for, when it did


@dataclass(frozen=True)
class Attempted(Generic[T]):
    value: T
    attempts: int


def call_with_retries(
    send: Callable[[float], T],
    *,
    policy: RetryPolicy,
    deadline: float | None,
    failure_of: Callable[[Exception], Failure],
    what: str,
    secrets: Collection[str | None],
    around_attempt: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> Attempted[T]:
    """`send(timeout_s)` until it succeeds, within the policy and before `deadline` (a
    `time.monotonic()` instant); a ProviderError "<what> failed: <reason>" when it cannot.

    `failure_of` turns what `send` raised into a Failure; `what` names the call ("LLM call of
    stage extract"); `secrets`, the keys the call is made with, are never told. A ProviderError
    raised by `send` itself (a reply that is not what the protocol promises) is final: the
    provider answered, and billed it. Each attempt runs inside `around_attempt()`, and what entering
    it raises ends the call unmade (a queued job whose user was erased: observability/inferences.py).
    """
    attempts = 0
    while True:
        timeout = policy.attempt_timeout(deadline, time.monotonic())
        if timeout is None:
            raise ProviderError(f"{what} not made: no time left before the deadline")
        attempts += 1
        with around_attempt():
            try:
                with attempt_deadline(time.monotonic() + timeout):
                    return Attempted(send(timeout), attempts)
            except ProviderError:
                raise
            except Exception as error:
                failure = failure_of(error)
        said = without_secrets(failure.reason, secrets)
        reason = said + (f" after {attempts} attempts" if attempts > 1 else "")
        if not failure.retryable or attempts >= policy.max_attempts:
            raise ProviderError(f"{what} failed: {reason}") from None
        wait = policy.backoff(attempts) if failure.retry_after_s is None else failure.retry_after_s
        if not policy.fits(wait, deadline, time.monotonic()):
            asked = f"; it asked to retry after {wait:g} s" if failure.retry_after_s is not None else ""
            raise ProviderError(f"{what} failed: {reason}{asked}, no time left to retry") from None
        get_logger().warning(
            "provider call retried",
            extra={"call": what, "reason": said, "attempt": attempts, "wait_s": round(wait, 3)},
        )
        time.sleep(wait)


def without_secrets(text: str, secrets: Collection[str | None]) -> str:
    """The text with each secret in it replaced by [REDACTED]."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def status_failure(error: Any) -> Failure:
    """An SDK's APIStatusError (both SDKs give it these attributes) as a Failure."""
    headers = error.response.headers
    kind = f" {error.type}" if isinstance(getattr(error, "type", None), str) else ""
    request_id = getattr(error, "request_id", None)
    request = f" (request {request_id})" if isinstance(request_id, str) and request_id else ""
    return Failure(
        f"HTTP {error.status_code}{kind}{request}",
        retryable=should_retry_status(error.status_code, headers),
        retry_after_s=retry_after_s(headers),
    )


def connection_failure(error: Exception) -> Failure:
    """An SDK's APIConnectionError, named by the transport's error behind it."""
    cause = type(error.__cause__).__name__ if error.__cause__ is not None else ""
    if cause == "ConnectError":
        return Failure("could not reach the provider", retryable=True)
    return Failure(f"the connection broke ({cause})" if cause else "the connection broke", retryable=True)


def should_retry_status(status: int, headers: Mapping[str, str]) -> bool:
    """The provider's `x-should-retry` first, else the statuses that may pass on their own."""
    said = (headers.get("x-should-retry") or "").strip().lower()
    if said in ("true", "false"):
        return said == "true"
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The wait the provider asked for: `retry-after-ms`, else `retry-after` in seconds or as an
    HTTP date; None when it asked for none (or said something unreadable)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = (headers.get(name) or "").strip()
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        if seconds == seconds and seconds >= 0:  # not NaN
            return seconds
    moment = email.utils.parsedate_tz(headers.get("retry-after") or "")
    if moment is None:
        return None
    return max(0.0, email.utils.mktime_tz(moment) - time.time())
