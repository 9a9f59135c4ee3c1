"""The TCP port check: up when a connection is accepted in time; the
response time is the time to connect, name lookup included."""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from polling.engine import verdict
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import transfer_reason
from polling.engine.transport import Exchange, TransferError, Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("tcp",)


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One TCP port check of the task's target (see probe.poll_steps)."""
    target = task.target
    parts = urlsplit(target.url)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not (host and port):
        return outcome(task, started_at, Trace(), None, f"invalid URL: {target.url}")
    trace = Trace()
    try:
        connection = yield handle.connecting(
            host,
            port,
            timeout_ms=round(target.timeout_seconds * 1000),
            trusted=target.trusted,
        )
    except TransferError as error:
        reason = transfer_reason(error, target.url, target.timeout_seconds)
        return outcome(task, started_at, trace, None, reason or error.message)
    trace.add(connection.phases)
    elapsed_ms = round(connection.elapsed_us / 1000)
    reason = verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(task, started_at, trace, None, reason, response_time_ms=elapsed_ms)
