"""The record of housekeeping runs: one HousekeepingRun per run, whether it
ran on the tasks process or from a management command."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django_q.models import Schedule

from django.utils import timezone

from projects.models import HousekeepingRun

RUNS_KEPT_PER_JOB = 100
Outcome = TypeVar("Outcome")


def run_recorded(job: str, work: Callable[[], Outcome]) -> Outcome:
    """Call `work` and record the run: when, how long, its outcome in words
    and its `rows_removed` (when it has one), or the error it raised."""
    run = HousekeepingRun.objects.create(job=job, started_at=timezone.now())
    try:
        outcome = work()
    except Exception as error:
        _finish(run, error=f"{type(error).__name__}: {error}")
        raise
    _finish(run, rows=getattr(outcome, "rows_removed", 0), summary=str(outcome))
    return outcome


def _finish(run: HousekeepingRun, *, rows: int = 0, summary: str = "", error: str = ""):
    run.finished_at = timezone.now()
    run.rows_removed = rows
    run.summary = summary[: HousekeepingRun._meta.get_field("summary").max_length]
    run.error = error
    run.save()
    _forget_old_runs(run.job)


def _forget_old_runs(job: str) -> None:
    older = HousekeepingRun.objects.filter(job=job).order_by("-started_at")
    oldest_kept = older.values_list("started_at", flat=True)[
        RUNS_KEPT_PER_JOB - 1 : RUNS_KEPT_PER_JOB
    ].first()
    if oldest_kept is not None:
        HousekeepingRun.objects.filter(job=job, started_at__lt=oldest_kept).delete()


def latest_runs() -> list[tuple[str, HousekeepingRun | None]]:
    """Each job's label and its latest run (None: it never ran)."""
    return [
        (
            label,
            HousekeepingRun.objects.filter(job=job).order_by("-started_at").first(),
        )
        for job, label in HousekeepingRun.Job.choices
    ]


def first_runs() -> dict[str, datetime]:
    """When each job that never ran is first due: its schedule's next run
    (the schedules share the jobs' names, projects/schedules.py). A fresh
    install shows this rather than "never ran" while nothing is wrong."""
    jobs = HousekeepingRun.Job.values
    return dict(Schedule.objects.filter(name__in=jobs).values_list("name", "next_run"))
