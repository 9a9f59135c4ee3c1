"""One poll of one target: probe() sends the request and never raises.

Every failure becomes a down Outcome with a short reason a person can read
("timed out after 10 s", "connection refused", "expected 200, got 503").
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import certifi
import httpcore
import httpx

from polling.engine.types import Outcome, Target, Task

logger = logging.getLogger(__name__)

USER_AGENT = "uptime-monitor/0.1"
MAX_REDIRECTS = 5
MAX_BODY_BYTES = 1024 * 1024
# The length of PollResult.error_message; probe.py stays free of Django.
MAX_ERROR_LENGTH = 1000
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

_ERRNO_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ECONNABORTED: "connection aborted",
    errno.EPIPE: "the server closed the connection while the request was sent",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
}
_NO_RESPONSE = "Server disconnected without sending a response"
_SHORT_BODY = "peer closed connection without sending complete message body"

# When the current thread's poll must be over, as a time.monotonic() value.
_poll = threading.local()
_ssl_context_lock = threading.Lock()


def make_client(*, ssl_context: ssl.SSLContext | None = None) -> httpx.Client:
    """Build a client for one worker thread; it is cheap and long-lived.

    Tests pass `ssl_context` to trust a local certificate authority; the
    poller leaves it out and gets one shared context with certifi's roots.
    """
    ssl_context = ssl_context or _default_ssl_context()
    return httpx.Client(
        transport=_deadline_transport(ssl_context),
        verify=ssl_context,
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        headers={"User-Agent": USER_AGENT},
        # No proxies or .netrc from the environment: a proxy mount would get
        # a transport of its own, outside the deadline below.
        trust_env=False,
    )


def probe(client: httpx.Client, task: Task) -> Outcome:
    """Poll the task's target once and say what happened."""
    target = task.target
    outcome = functools.partial(
        Outcome,
        project_id=target.project_id,
        started_at=datetime.now(UTC),
        due_at=task.due_at,
    )
    start = time.monotonic()
    _poll.deadline = start + target.timeout_seconds
    response = None
    try:
        with _stream(client, target) as response:
            _read_capped(response)
            elapsed_ms = round((time.monotonic() - start) * 1000)
    except Exception as exc:
        status_code = None if response is None else response.status_code
        error = _reason(exc, target)[:MAX_ERROR_LENGTH]
        return outcome(up=False, status_code=status_code, error=error)
    finally:
        _poll.deadline = None
    status_code = response.status_code
    up = status_code == target.expected_status
    error = "" if up else f"expected {target.expected_status}, got {status_code}"
    return outcome(
        up=up, status_code=status_code, response_time_ms=elapsed_ms, error=error
    )


def _stream(
    client: httpx.Client, target: Target
) -> contextlib.AbstractContextManager[httpx.Response]:
    return client.stream(
        target.method,
        target.url,
        headers=target.headers,
        content=target.body or None,
        timeout=target.timeout_seconds,
    )


def _read_capped(response: httpx.Response) -> None:
    """Read up to MAX_BODY_BYTES of the raw body; closing drops the rest."""
    received = 0
    for chunk in response.iter_raw():
        received += len(chunk)
        if received >= MAX_BODY_BYTES:
            return


def _default_ssl_context() -> ssl.SSLContext:
    # Building a context costs about 60 ms of CPU; build it once, even when
    # every worker thread makes its client at the same moment.
    with _ssl_context_lock:
        return _certifi_ssl_context()


@functools.cache
def _certifi_ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


# The deadline ----------------------------------------------------------------
#
# httpx timeouts bound each connect, read and write on its own, so a server
# that sends one byte a second would hold a worker for ever. The streams
# below cut every timeout to the time left in the current thread's poll, so
# the project's timeout bounds connect, TLS, headers, body and every redirect
# hop together. DNS lookups (getaddrinfo inside socket.create_connection)
# cannot be interrupted and are not bounded by it.


def _deadline_transport(ssl_context: ssl.SSLContext) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(verify=ssl_context, limits=LIMITS)
    # httpx 0.28's HTTPTransport takes no network_backend argument, so its
    # pool is replaced by the same pool with the deadline backend. The drip
    # tests in tests/test_probe.py fail if this stops taking effect.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        max_connections=LIMITS.max_connections,
        max_keepalive_connections=LIMITS.max_keepalive_connections,
        keepalive_expiry=LIMITS.keepalive_expiry,
        network_backend=_DeadlineBackend(),
    )
    return transport


def _time_left(timeout: float | None, timeout_error: type[Exception]) -> float | None:
    """Cut an operation's timeout to what is left of the poll's budget."""
    deadline = getattr(_poll, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timeout_error("the poll's timeout is spent")
    return left if timeout is None else min(timeout, left)


class _DeadlineBackend(httpcore.SyncBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        # The cut applies once: create_connection gives each address it
        # tries this timeout, and DNS is not covered at all.
        timeout = _time_left(timeout, httpcore.ConnectTimeout)
        stream = super().connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, timeout)
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


# Reasons ---------------------------------------------------------------------


def _reason(exc: Exception, target: Target) -> str:
    """Say in a few words why a poll failed; log what was not foreseen."""
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {target.timeout_seconds:g} s"
    if isinstance(exc, httpx.TooManyRedirects):
        return "too many redirects"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return _unsupported_reason(exc, target)
    if isinstance(exc, httpx.RemoteProtocolError):
        return _protocol_reason(exc)
    if isinstance(exc, httpx.LocalProtocolError | httpx.InvalidURL):
        return f"invalid request: {exc}"
    if isinstance(exc, UnicodeEncodeError):
        return "invalid request: header names and values must be ASCII"
    if isinstance(exc, httpx.TransportError):
        reason = _network_reason(exc, target)
        if reason:
            return reason
    logger.warning("Unexpected error polling %s", target.url, exc_info=exc)
    cause = _innermost_cause(exc)
    return f"unexpected error: {type(cause).__name__}: {cause}"


def _unsupported_reason(exc: httpx.UnsupportedProtocol, target: Target) -> str:
    url = _failed_url(exc, target)
    if url == httpx.URL(target.url):
        return f"unsupported URL: {url}"
    return f"unsupported redirect target: {url}"


def _protocol_reason(exc: httpx.RemoteProtocolError) -> str:
    message = str(exc)
    if message.startswith(_NO_RESPONSE):
        return "server closed the connection without a response"
    if message.startswith(_SHORT_BODY):
        return "server closed the connection before the body was complete"
    if message.startswith("Invalid URL in location header"):
        return "invalid redirect location"
    return "invalid HTTP response"


def _network_reason(exc: httpx.TransportError, target: Target) -> str | None:
    """Name a connect, read or write failure, or None if it is not foreseen."""
    cause = _innermost_cause(exc)
    if isinstance(cause, ssl.SSLCertVerificationError):
        return f"TLS certificate verify failed: {cause.verify_message}"
    if isinstance(cause, ssl.SSLError):
        reason = (cause.reason or str(cause)).replace("_", " ").lower()
        return f"TLS error: {reason}"
    if isinstance(cause, socket.gaierror):
        return f"DNS lookup failed for {_failed_url(exc, target).host}"
    if isinstance(cause, OSError):
        return _ERRNO_REASONS.get(cause.errno)
    return None


def _failed_url(exc: httpx.RequestError, target: Target) -> httpx.URL:
    """The URL of the hop that failed; a redirect may have changed it."""
    try:
        return exc.request.url
    except RuntimeError:  # No request attached: raised outside a client.
        return httpx.URL(target.url)


def _innermost_cause(exc: BaseException) -> BaseException:
    # Follow __context__ too: httpcore's pool re-raises with "from None",
    # which drops the OSError from __cause__ but keeps it there.
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc
