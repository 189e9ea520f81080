"""The HTTP client of both provider SDKs: an attempt's connect, every read and every write end by
the attempt's deadline (`ai/retries.py`), not only each one on its own.

httpx bounds each socket operation separately: a provider sending one byte a second never times
out, however long the whole reply takes. httpcore passes every socket operation through its
network backend, so the backend here cuts each to the time the attempt has left. Imported with the
SDKs, on the first model call (never at cold start).
"""

from __future__ import annotations

import socket
import time
from typing import Any

import httpcore2
import httpx2

from gligabao.ai.retries import current_attempt_deadline

# The SDKs' own defaults (a large pool; TCP keepalive on long calls through NAT gateways).
MAX_CONNECTIONS = 1000
MAX_KEEPALIVE_CONNECTIONS = 100
SOCKET_OPTIONS = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]


def deadline_bound_client(sdk_client_class: type[httpx2.Client]) -> httpx2.Client:
    """An HTTP client for an SDK (`anthropic.DefaultHttpxClient`, `openai.DefaultHttpxClient`)
    whose connections all go through `DeadlineBackend`."""
    limits = httpx2.Limits(
        max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE_CONNECTIONS
    )
    transport = httpx2.HTTPTransport(limits=limits, socket_options=SOCKET_OPTIONS)
    pool = transport._pool
    # httpcore's extension point (ConnectionPool(network_backend=...)), which httpx does not expose.
    if not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpcore2 has no network backend to bound: check ai/transport.py")
    pool._network_backend = DeadlineBackend(pool._network_backend)
    return sdk_client_class(transport=transport, limits=limits)


class DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend):
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore2.NetworkStream:
        timeout = _bounded(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore2.NetworkStream:
        timeout = _bounded(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        timeout = _bounded(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _bounded(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout`, or less: what the current attempt has left (raises `expired` when nothing)."""
    deadline = current_attempt_deadline()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the attempt's time is up")
    return left if timeout is None else min(timeout, left)
