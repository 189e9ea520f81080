"""What the memory core needs from the outside, as small Protocols: the bootstrap wires the real
adapters (PostgreSQL, Anthropic, OpenAI), unit tests wire in-process fakes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import pydantic

    from gligabao.db.connection import UnitOfWork
    from gligabao.limits import Limits
    from gligabao.model import Place
    from gligabao.observability.inferences import CallContext

Reply = TypeVar("Reply", bound="pydantic.BaseModel")
T = TypeVar("T")

Clock = Callable[[], datetime]


class LLM(Protocol):
    """One structured reply per call; every call recorded on the CallContext, failed ones too."""

    def complete(
        self,
        call: CallContext,
        stage: str,
        *,
        system: str,
        content: str | list[dict],
        reply_model: type[Reply],
        reasoning: str = "none",
        model: str | None = None,
        max_tokens: int = 4096,
        deadline: float | None = None,
    ) -> Reply: ...


class Embedder(Protocol):
    """One vector per text, in order; every request recorded on the CallContext."""

    def embed(
        self, call: CallContext, texts: list[str], stage: str = "embed", *, deadline: float | None = None
    ) -> list[list[float]]: ...


class Transactions(Protocol):
    """Units of work: one transaction of one user, with the id of a dataset when one is named."""

    def transaction(self, user_id: str, dataset: str | None = None) -> AbstractContextManager[UnitOfWork]: ...

    def read(self, user_id: str, work: Callable[[UnitOfWork], T], dataset: str | None = None) -> T:
        """`work`, which only reads, sent again once when the connection turns out dropped."""
        ...


class GeoResolver(Protocol):
    """Place names to coordinates (SPEC section 9): the offline gazetteer or Amazon Location."""

    def resolve(self, names: Iterable[str]) -> dict[str, Place]:
        """The places found, keyed by the name as given; a name not found is left out."""
        ...


class JobQueue(Protocol):
    """The queue of asynchronous remembers (SQS FIFO on AWS, a thread in `gligabao serve`).

    Messages of one group are delivered in the order sent, one at a time; a message's
    `dedup_id` makes a repeated send within the queue's deduplication window a no-op."""

    def enqueue(self, group: str, messages: list[tuple[str, str]]) -> None:
        """Send (dedup_id, body) messages in order; raises when any of them was not accepted."""
        ...

    def retry_after(self, receipt: str, seconds: int) -> None:
        """Make a message that failed visible again after `seconds` (the retry's backoff)."""
        ...


class Memory(Protocol):
    """Everything a use case of the memory core takes: the bundle the bootstrap builds."""

    @property
    def limits(self) -> Limits: ...

    @property
    def database(self) -> Transactions: ...

    @property
    def llm(self) -> LLM: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def geo(self) -> GeoResolver | None:
        """The geo resolver; None while geo is off (GB_GEO)."""
        ...
