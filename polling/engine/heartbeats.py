"""Heartbeat (push) projects: the outcomes of a ping and of a missed one.

A heartbeat project is never polled. A ping (polling/pings/) is stored
as an up or down result and sets the project's deadline to the ping's time
plus its interval plus its grace; when the deadline passes with no ping,
the scheduler's check yields a missed-ping outcome. Both move the stored
deadline in the writer's transaction, where the store keeps a missed ping
only if the deadline it passed is still the stored one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from polling.engine.types import DeadlineMove, Outcome, Target, Task

MAX_MESSAGE_BYTES = 10 * 1024
FAILURE_REPORTED = "failure reported by ping"


def ping_outcome(
    project_id: int,
    *,
    at: datetime,
    failed: bool,
    message: str,
    interval_seconds: float,
    grace_seconds: float,
) -> Outcome:
    """A ping received `at`; `failed` when it came to /fail."""
    error = ""
    if failed:
        error = f"{FAILURE_REPORTED}: {message}" if message else FAILURE_REPORTED
    window = timedelta(seconds=interval_seconds + grace_seconds)
    return Outcome(
        project_id=project_id,
        up=not failed,
        started_at=at,
        due_at=at,
        error=error,
        message="" if failed else message,
        deadline=DeadlineMove(to=at + window),
    )


def missed_ping(task: Task, now: datetime) -> Outcome:
    """The check at a heartbeat project's deadline: no ping came in time
    (as far as the poller knows; the store has the last word)."""
    target = task.target
    passed = target.ping_deadline or task.due_at
    window = target.interval_seconds + target.grace_seconds
    return Outcome(
        project_id=target.project_id,
        up=False,
        started_at=now,
        due_at=task.due_at,
        error=f"no ping within {human_duration(window)}",
        deadline=DeadlineMove(
            to=passed + timedelta(seconds=target.interval_seconds), passed=passed
        ),
    )


def first_due(target: Target, now: datetime) -> float | None:
    """Seconds from `now` until a heartbeat target's deadline (0 when it
    has passed), or None for a target that is polled."""
    if not target.heartbeat or target.ping_deadline is None:
        return None
    return max((target.ping_deadline - now).total_seconds(), 0.0)


def human_duration(seconds: float) -> str:
    """90 -> "1 min 30 s", 3900 -> "1 h 5 min", 90000 -> "1 d 1 h"."""
    seconds = round(seconds)
    parts = []
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min"), (1, "s")):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}")
    return " ".join(parts[:2]) or "0 s"
