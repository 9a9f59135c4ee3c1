"""Seeding polls and objectives for the objectives tests, with an
injected clock: `NOW` is handed to the code, never read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from projects.housekeeping.rollups import rebuild_rollups
from projects.models import PollResult, ServiceLevelObjective, Status
from projects.objectives.alerts import evaluate_objectives

NOW = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def seed(project, start, end, every, down=lambda at: False, ms=lambda at: 100):
    at, polls = start, []
    while at < end:
        polls.append(
            PollResult(
                project=project,
                polled_at=at,
                status=Status.DOWN if down(at) else Status.UP,
                response_time_ms=ms(at),
            )
        )
        at += every
    PollResult.objects.bulk_create(polls)


def objective(project=None, **fields) -> ServiceLevelObjective:
    fields.setdefault("name", "api availability")
    fields.setdefault("target_percent", 99)
    fields.setdefault("window_days", 7)
    slo = ServiceLevelObjective(project=project, **fields)
    slo.full_clean()
    slo.save()
    return slo


def play(project, start, minutes, down) -> None:
    """Polls every minute from `start`, the clock moving 5 minutes at a
    time: the polls up to it are stored, then the objectives evaluated."""
    for step in range(0, minutes, 5):
        at = start + timedelta(minutes=step)
        seed(project, at, at + 5 * MINUTE, MINUTE, down=down)
        rebuild_rollups(since=at)
        evaluate_objectives(clock=lambda at=at: at + 5 * MINUTE)
