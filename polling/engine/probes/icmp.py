"""The ping check: icmp://host. Sends `ping_count` echo requests, spread
over at most half the timeout (one a second at most), and waits for the
replies until the timeout. Up when at least one reply came back and the
loss is at most `ping_max_loss_percent`. The average round trip is the
poll's response time; min/avg/max and the loss are its message."""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from polling.engine import verdict
from polling.engine.dns_query import family_of
from polling.engine.pinger import EchoRound, Rtts
from polling.engine.probes.addressing import Unreachable, address_of
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.sockets import SocketFailed
from polling.engine.transport import Transport
from polling.engine.types import Outcome, Target, Task

SCHEMES = ("icmp",)
MAX_SPACING_SECONDS = 1.0


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Any, Any, Outcome]:
    """One ping check of the task's target (see probe.poll_steps)."""
    target = task.target
    deadline = time.monotonic() + target.timeout_seconds
    try:
        address = yield from address_of(handle, target, _host(target), deadline)
        pinger = handle.pingers.for_family(family_of(address))
        left = max(deadline - time.monotonic(), 0.001)
        count = target.ping_count
        rtts = yield EchoRound(
            pinger,
            address,
            count=count,
            spacing=min(MAX_SPACING_SECONDS, left / 2 / max(count - 1, 1)),
            timeout_seconds=left,
        )
    except Unreachable as failed:
        return outcome(task, started_at, Trace(), None, failed.reason)
    except SocketFailed as failed:
        return outcome(task, started_at, Trace(), None, failed.message)
    except (OSError, AttributeError) as error:
        reason = f"cannot ping: {getattr(error, 'strerror', None) or error}"
        return outcome(task, started_at, Trace(), None, reason)
    average_ms = _average_ms(rtts)
    reason = loss_reason(rtts, target.ping_max_loss_percent) or (
        verdict.slow_reason(target.max_response_time_ms, average_ms)
        if average_ms is not None
        else ""
    )
    return outcome(
        task,
        started_at,
        Trace(),
        None,
        reason,
        response_time_ms=average_ms,
        message=summary(rtts),
        rtt_us=_round_trips(rtts),
        loss_percent=rtts.loss_percent,
    )


def _host(target: Target) -> str:
    try:
        name = urlsplit(target.url).hostname
    except ValueError:
        name = None
    if not name:
        raise Unreachable(f"invalid URL: {target.url}")
    return name


def loss_reason(rtts: Rtts, max_loss_percent: int) -> str:
    """Why a round of pings counts as down; "" when it is up."""
    if rtts.received == 0:
        return f"{rtts.sent} of {rtts.sent} pings lost"
    if rtts.loss_percent > max_loss_percent:
        return f"loss {rtts.loss_percent} % > {max_loss_percent} %"
    return ""


def summary(rtts: Rtts) -> str:
    """In words: "3 of 3 replies, round trip min/avg/max 0.041/0.052/0.070
    ms, loss 0 %"."""
    trips = rtts.round_trips_us
    if not trips:
        return f"0 of {rtts.sent} replies, loss 100 %"
    low, high = trips[0], trips[-1]
    mean = sum(trips) / len(trips)
    return (
        f"{rtts.received} of {rtts.sent} replies, round trip min/avg/max "
        f"{low / 1000:.3f}/{mean / 1000:.3f}/{high / 1000:.3f} ms, "
        f"loss {rtts.loss_percent} %"
    )


def _round_trips(rtts: Rtts) -> tuple[int, int, int] | None:
    trips = rtts.round_trips_us
    if not trips:
        return None
    return trips[0], round(sum(trips) / len(trips)), trips[-1]


def _average_ms(rtts: Rtts) -> int | None:
    trips = rtts.round_trips_us
    return round(sum(trips) / len(trips) / 1000) if trips else None
