"""The housekeeping jobs as the tasks process runs them (see
projects/schedules.py): each run is recorded, and stops after a while so
a SIGTERM or a deploy never waits long for it; a run that stopped with work
left queues the next one at once."""

from __future__ import annotations

import time

from django_q.tasks import async_task

from django.conf import settings

from projects.housekeeping.compaction import compact_rollups
from projects.housekeeping.optimize import optimize_database
from projects.housekeeping.retention import prune_results
from projects.housekeeping.runs import run_recorded
from projects.models import HousekeepingRun

Job = HousekeepingRun.Job
MAX_RUN_SECONDS = 120


def run_deadline() -> float:
    """When a run stops: well inside Q_TIMEOUT, after which the worker
    would be killed."""
    seconds = min(MAX_RUN_SECONDS, settings.Q_TIMEOUT / 2)
    return time.monotonic() + seconds


def prune_results_task() -> str:
    pruned = run_recorded(
        Job.PRUNE_RESULTS, lambda: prune_results(deadline=run_deadline())
    )
    if not pruned.finished:
        async_task(f"{__name__}.prune_results_task")
    return str(pruned)


def compact_rollups_task() -> str:
    compacted = run_recorded(
        Job.COMPACT_ROLLUPS, lambda: compact_rollups(deadline=run_deadline())
    )
    if not compacted.finished:
        async_task(f"{__name__}.compact_rollups_task")
    return str(compacted)


def optimize_database_task() -> str:
    return run_recorded(Job.OPTIMIZE_DATABASE, optimize_database)
