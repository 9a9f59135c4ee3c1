"""How healthy the poller looks, by the seed's thresholds."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from polling.engine.status import PollerStatus


class Level(enum.StrEnum):
    HEALTHY = "healthy"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True, slots=True)
class Reading:
    label: str
    value: str
    level: Level
    explanation: str


def concurrency_level(in_flight: int, limit: int) -> Level:
    """Under 50 % of the limit in flight is healthy, 50-90 % a warning,
    above 90 % critical."""
    share = in_flight / limit if limit else 1.0
    if share < 0.5:
        return Level.HEALTHY
    return Level.WARNING if share <= 0.9 else Level.CRITICAL


def task_queue_level(depth: int) -> Level:
    """Under 100 waiting is healthy, 100-500 a warning, above 500 critical."""
    if depth < 100:
        return Level.HEALTHY
    return Level.WARNING if depth <= 500 else Level.CRITICAL


def limit_level(all_busy_share: float, delaying: bool) -> Level:
    """Healthy while the limit does not delay polls; a warning when every
    slot was busy for part of the last minute, critical for half of it."""
    if not delaying:
        return Level.HEALTHY
    return Level.WARNING if all_busy_share < 0.5 else Level.CRITICAL


def readings(status: PollerStatus) -> list[Reading]:
    in_flight, limit = status.polls_in_flight, status.max_concurrent_http
    depth = status.task_queue_depth
    return [
        Reading(
            "Polls in flight",
            f"{in_flight} of {limit}",
            concurrency_level(in_flight, limit),
            "Near the limit, polls wait for a free worker; raise "
            "MAX_CONCURRENT_HTTP or lower timeouts.",
        ),
        Reading(
            "All slots busy, last minute",
            f"{status.slots_all_busy_share * 100:.0f} %",
            limit_level(status.slots_all_busy_share, status.limit_delays_polls),
            status.limit_advice(),
        ),
        Reading(
            "Task queue",
            f"{depth} waiting",
            task_queue_level(depth),
            "Polls that are due but not yet started.",
        ),
    ]
