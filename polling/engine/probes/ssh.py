"""The SSH check: connect, read the server's identification line
(RFC 4253 4.2: "SSH-2.0-OpenSSH_9.2p1 ...", maybe after other lines),
and close without a key exchange. Up when the line comes in time and
holds the expected text; the line is stored as the poll's message."""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import datetime
from typing import Any

from polling.engine import verdict
from polling.engine.dns_query import family_of
from polling.engine.probes.addressing import Unreachable, address_of, host_and_port
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.sockets import (
    IN,
    OUT,
    SocketExchange,
    SocketFailed,
    connect_result,
    errno_reason,
    start_connect,
    stream_socket,
)
from polling.engine.transport import Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("ssh",)
DEFAULT_PORT = 22
# RFC 4253: the identification line is at most 255 characters; lines
# before it are allowed, so a little more is read before giving up.
MAX_GREETING_BYTES = 8192


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Any, Any, Outcome]:
    """One SSH banner check of the task's target (see probe.poll_steps)."""
    target = task.target
    deadline = time.monotonic() + target.timeout_seconds
    try:
        host, port = host_and_port(target, DEFAULT_PORT)
        address = yield from address_of(handle, target, host, deadline)
        banner = yield BannerRead(
            address,
            port,
            timeout_seconds=max(deadline - time.monotonic(), 0.001),
            shown_timeout=target.timeout_seconds,
        )
    except Unreachable as failed:
        return outcome(task, started_at, Trace(), None, failed.reason)
    except SocketFailed as failed:
        return outcome(task, started_at, Trace(), None, failed.message)
    elapsed_ms = round((time.monotonic() - (deadline - target.timeout_seconds)) * 1000)
    reason = verdict.reply_reason(
        "banner", banner, target.expected_reply, regex=target.expected_reply_regex
    ) or verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(
        task,
        started_at,
        Trace(),
        None,
        reason,
        response_time_ms=elapsed_ms,
        message=banner,
    )


class BannerRead(SocketExchange):
    """Connect to (address, port) and read up to the "SSH-" line."""

    def __init__(
        self, address: str, port: int, *, timeout_seconds: float, shown_timeout: float
    ) -> None:
        super().__init__(
            stream_socket(family_of(address)),
            timeout_seconds=timeout_seconds,
            shown_timeout=shown_timeout,
        )
        self._received = b""
        try:
            start_connect(self.sock, (address, port))
            self.events = OUT
        except OSError as error:
            self.fail(errno_reason(error))

    def ready(self, mask: int) -> bool:
        if self.events == OUT:
            connect_result(self.sock)
            self.events = IN
            return False
        chunk = self.sock.recv(MAX_GREETING_BYTES)
        if not chunk:
            return self.fail("connection closed before the SSH banner")
        self._received += chunk
        return self._banner_found()

    def _banner_found(self) -> bool:
        *lines, _partial = self._received.split(b"\n")
        for line in lines:
            if line.startswith(b"SSH-"):
                self.result = line.rstrip(b"\r").decode("utf-8", errors="replace")
                self.done = True
                return True
        if len(self._received) >= MAX_GREETING_BYTES:
            return self.fail("not an SSH server: no SSH- line in its greeting")
        return False
