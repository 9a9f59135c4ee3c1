"""Projects made straight into the database, for the poller's tests."""

from __future__ import annotations

import itertools

from polling.engine.types import Target
from polling.store import load_targets
from projects.models import HourlyRollup, Project

_numbers = itertools.count(1)


def quick_projects(
    server,
    count: int,
    *,
    path: str = "/ok",
    interval: int = 1,
    timeout: int = 2,
    enabled: bool = True,
) -> list[Project]:
    """`count` projects polling `server` at `path` every `interval` seconds.

    bulk_create skips validation, so intervals can be shorter than
    MIN_POLL_INTERVAL and tests stay short, and it sends no post_save: a
    running poller hears of these projects only through a reload or a sync.
    """
    numbers = [next(_numbers) for _ in range(count)]
    return Project.objects.bulk_create(
        Project(
            name=f"quick {number}",
            url=server.url(f"{path}?p={number}"),
            interval=interval,
            interval_unit="seconds",
            timeout_seconds=timeout,
            enabled=enabled,
        )
        for number in numbers
    )


def rollup_rows() -> list[tuple]:
    """Every HourlyRollup as a tuple, ordered by project and hour."""
    return list(
        HourlyRollup.objects.order_by("project_id", "hour").values_list(
            "project_id",
            "hour",
            "polls",
            "failures",
            "responses",
            "response_time_sum_ms",
            "response_time_max_ms",
        )
    )


def project_form(server, path: str = "/ok", **changes) -> dict:
    """The admin's project form, filled in for `server` at `path`, polled
    every second unless `changes` say otherwise."""
    return {
        "name": "api",
        "url": server.url(path),
        "method": "GET",
        "headers": "{}",
        "body": "",
        "expected_status": "200",
        "interval": "1",
        "interval_unit": "seconds",
        "timeout_seconds": "1",
        "failure_threshold": "3",
        "recovery_threshold": "1",
        "enabled": "on",
        **changes,
    }


def load_target(project_id: int) -> Target | None:
    """The project as the poller reads it, or None when it would not poll
    it (disabled or gone)."""
    return next(iter(load_targets([project_id])), None)
