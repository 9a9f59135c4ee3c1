"""Exchanges on the poller's own non-blocking sockets, for the kinds
libcurl does not speak (an SSH banner, UDP, DNS): run in the same epoll
wait as libcurl's exchanges (transfers.py), or alone by perform().

A SocketExchange is one step of a poll: it waits on a Channel (a socket,
its own or shared) until it is done or its deadline passes, then
finish() returns what it found or raises SocketFailed with a reason a
person can read. Nothing here blocks: a host that never answers costs
one deadline, not a thread.
"""

from __future__ import annotations

import contextlib
import errno
import select
import socket
import time
from typing import Any

from polling.engine.reasons import timed_out
from polling.engine.transport import TransferError

IN = select.EPOLLIN
OUT = select.EPOLLOUT
_ERRNO_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
    errno.EPIPE: "connection closed by the server",
}


class SocketFailed(TransferError):
    """A socket exchange failed; `message` is the poll's reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(-1, reason)


def errno_reason(error: OSError) -> str:
    return _ERRNO_REASONS.get(error.errno, f"socket error: {error.strerror}")


class SocketExchange:
    """One step of a poll on a socket. Subclasses set `events` (what to
    wait for) and implement ready(mask) -> bool (True: done); a step
    that fails sets `error`. The exchange is its own channel unless it
    waits on a shared one (`channel`)."""

    curl = None  # not a libcurl exchange: Transfers and perform() ask
    shared = False  # a channel of many exchanges stays open when one ends

    def __init__(
        self,
        sock: socket.socket | None,
        *,
        timeout_seconds: float,
        shown_timeout: float | None = None,
    ) -> None:
        self.sock = sock
        self.events = IN
        self.timeout_seconds = timeout_seconds
        # The poll's timeout, which a reason names; this step may have only
        # what is left of it.
        self.shown_timeout = shown_timeout or timeout_seconds
        self.deadline = time.monotonic() + timeout_seconds
        self.started = time.monotonic()
        self.error = ""
        self.done = False
        self.result: Any = None

    @property
    def channel(self) -> SocketExchange | None:
        return self

    def fileno(self) -> int:
        return self.sock.fileno()

    def ready(self, mask: int) -> bool:
        raise NotImplementedError

    def channel_ready(self, mask: int) -> list[SocketExchange]:
        """As a channel: the exchanges that ended (this one, or none)."""
        try:
            ended = self.ready(mask)
        except OSError as error:
            self.fail(errno_reason(error))
            ended = True
        return [self] if ended else []

    def fail(self, reason: str) -> bool:
        self.error = self.error or reason
        self.done = True
        return True

    def expire(self) -> None:
        """Its deadline passed before it was done. An exchange that wants
        waking at times (a round of pings) moves its deadline on instead
        of ending."""
        self.fail(timed_out(self.shown_timeout))

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()

    @property
    def elapsed_ms(self) -> int:
        return round((time.monotonic() - self.started) * 1000)

    def finish(self, code: int = 0, message: str = "") -> Any:
        """What the exchange found; raises SocketFailed when it failed."""
        self.close()
        if self.error or not self.done:
            raise SocketFailed(self.error or timed_out(self.shown_timeout))
        return self.result

    def run(self) -> Any:
        """Run to its end on this thread (probe()); what finish() returns."""
        return _run_alone(self)


def _run_alone(exchange: SocketExchange) -> Any:
    channel = exchange.channel
    poller = select.poll()
    registered = None
    while not exchange.done:
        left = exchange.deadline - time.monotonic()
        if left <= 0:
            exchange.expire()  # a wake-up it asked for, or its end
            continue
        if channel is None:
            time.sleep(left)
            continue
        events = channel.events
        if registered != events:
            if registered is not None:
                poller.modify(channel.fileno(), events)
            else:
                poller.register(channel.fileno(), events)
            registered = events
        for _, mask in poller.poll(left * 1000):
            channel.channel_ready(mask)
    return exchange.finish()


def stream_socket(family: int) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setblocking(False)
    return sock


def datagram_socket(family: int) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setblocking(False)
    return sock


def start_connect(sock: socket.socket, address: tuple) -> None:
    """Begin a non-blocking connect; done when the socket is writable."""
    code = sock.connect_ex(address)
    if code not in (0, errno.EINPROGRESS):
        raise OSError(code, _strerror(code))


def connect_result(sock: socket.socket) -> None:
    """Raises OSError when the connect begun failed."""
    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if code:
        raise OSError(code, _strerror(code))


def _strerror(code: int) -> str:
    with contextlib.suppress(ValueError):
        return errno.errorcode[code]
    return str(code)
