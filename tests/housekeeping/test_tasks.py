"""The housekeeping jobs as the tasks process runs them: recorded, bounded
in time, continued when work is left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django_q.models import OrmQ

from django.db import connection

from projects.housekeeping import tasks
from projects.housekeeping.runs import RUNS_KEPT_PER_JOB, latest_runs, run_recorded
from projects.models import HousekeepingRun, PollResult

pytestmark = pytest.mark.django_db
Job = HousekeepingRun.Job


@pytest.fixture
def old_polls(make_project, add_polls):
    add_polls(
        make_project(),
        "u" * 60,
        end=datetime.now(UTC) - timedelta(days=20),
        every=timedelta(days=1),
    )


def test_pruning_is_recorded_with_the_rows_it_removed(old_polls):
    before = PollResult.objects.count()

    summary = tasks.prune_results_task()

    run = HousekeepingRun.objects.get(job=Job.PRUNE_RESULTS)
    assert run.rows_removed == before - PollResult.objects.count() > 0
    assert run.summary == summary
    assert run.finished_at >= run.started_at
    assert OrmQ.objects.count() == 0  # finished: nothing queued after it


def test_a_run_that_runs_out_of_time_queues_the_next(old_polls, monkeypatch):
    monkeypatch.setattr(tasks, "MAX_RUN_SECONDS", 0)

    tasks.prune_results_task()

    assert HousekeepingRun.objects.get().summary.endswith("left for the next run.")
    assert OrmQ.objects.count() == 1


def test_compaction_and_optimization_are_recorded(old_polls):
    tasks.compact_rollups_task()
    said = tasks.optimize_database_task()

    assert HousekeepingRun.objects.get(job=Job.COMPACT_ROLLUPS).summary.startswith(
        "Compacted"
    )
    if connection.vendor == "sqlite":
        assert said == "Ran PRAGMA optimize."
    else:
        assert said.startswith("Nothing to do")


def test_a_failed_run_is_recorded_with_its_error():
    def broken():
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        run_recorded(Job.COMPACT_ROLLUPS, broken)

    run = HousekeepingRun.objects.get()
    assert run.error == "RuntimeError: disk full"
    assert run.finished_at is not None


def test_only_the_latest_runs_of_a_job_are_kept():
    for _ in range(RUNS_KEPT_PER_JOB + 3):
        run_recorded(Job.OPTIMIZE_DATABASE, lambda: "done")
    run_recorded(Job.PRUNE_RESULTS, lambda: "done")

    assert HousekeepingRun.objects.filter(job=Job.OPTIMIZE_DATABASE).count() == (
        RUNS_KEPT_PER_JOB
    )
    assert HousekeepingRun.objects.filter(job=Job.PRUNE_RESULTS).count() == 1


def test_latest_runs_names_every_job_and_its_last_run():
    run_recorded(Job.PRUNE_RESULTS, lambda: "first")
    run_recorded(Job.PRUNE_RESULTS, lambda: "second")

    runs = dict(latest_runs())

    assert list(runs) == [label for _, label in Job.choices]
    assert runs["Prune old polls"].summary == "second"
    assert runs["Compact rollups"] is None
