"""The UDP check: send the project's payload to host:port and wait for
one datagram back. Up when a reply comes in time and holds the expected
text (or matches it as a regular expression); no reply is down, and an
ICMP port-unreachable is "port closed". The reply, as text, is stored as
the poll's message."""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import datetime
from typing import Any

from polling.engine import verdict
from polling.engine.dns_query import family_of
from polling.engine.probes.addressing import Unreachable, address_of, host_and_port
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import timed_out
from polling.engine.sockets import (
    SocketExchange,
    SocketFailed,
    datagram_socket,
    errno_reason,
)
from polling.engine.transport import Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("udp",)
MAX_DATAGRAM = 65535
SHOWN_REPLY_CHARACTERS = 200


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Any, Any, Outcome]:
    """One UDP check of the task's target (see probe.poll_steps)."""
    target = task.target
    start = time.monotonic()
    deadline = start + target.timeout_seconds
    try:
        host, port = host_and_port(target, None)
        address = yield from address_of(handle, target, host, deadline)
        reply = yield Datagram(
            address,
            port,
            target.payload,
            timeout_seconds=max(deadline - time.monotonic(), 0.001),
            shown_timeout=target.timeout_seconds,
        )
    except Unreachable as failed:
        return outcome(task, started_at, Trace(), None, failed.reason)
    except SocketFailed as failed:
        return outcome(task, started_at, Trace(), None, failed.message)
    elapsed_ms = round((time.monotonic() - start) * 1000)
    text = reply.decode("utf-8", errors="replace")
    reason = verdict.reply_reason(
        "reply", text, target.expected_reply, regex=target.expected_reply_regex
    ) or verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(
        task,
        started_at,
        Trace(),
        None,
        reason,
        response_time_ms=elapsed_ms,
        message=text[:SHOWN_REPLY_CHARACTERS],
    )


class Datagram(SocketExchange):
    """Send `payload` to (address, port) on a connected UDP socket, so the
    kernel hands back only its replies and its ICMP errors; finish()
    returns the first reply's bytes."""

    def __init__(
        self,
        address: str,
        port: int,
        payload: bytes,
        *,
        timeout_seconds: float,
        shown_timeout: float,
    ) -> None:
        super().__init__(
            datagram_socket(family_of(address)),
            timeout_seconds=timeout_seconds,
            shown_timeout=shown_timeout,
        )
        try:
            self.sock.connect((address, port))
            self.sock.send(payload)
        except OSError as error:
            self.fail(self._reason(error))

    def ready(self, mask: int) -> bool:
        try:
            self.result = self.sock.recv(MAX_DATAGRAM)
        except OSError as error:
            return self.fail(self._reason(error))
        self.done = True
        return True

    def expire(self) -> None:
        self.fail(f"no reply: {timed_out(self.shown_timeout)}")

    @staticmethod
    def _reason(error: OSError) -> str:
        if isinstance(error, ConnectionRefusedError):
            return "port closed"
        return errno_reason(error)
