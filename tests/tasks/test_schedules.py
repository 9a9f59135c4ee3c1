from __future__ import annotations

from datetime import UTC, datetime, time

import pytest
from django_q.models import Schedule

from django.core.management import call_command
from django.urls import reverse

from projects.schedules import SCHEDULES, ScheduledJob, register_schedules

ANSWER = "tests.support.qcluster_jobs.answer"
JOBS = [
    ScheduledJob("nightly", ANSWER, Schedule.DAILY, at=time(2)),
    ScheduledJob("hourly", ANSWER, Schedule.HOURLY, at=time(0, 17)),
    ScheduledJob("often", ANSWER, Schedule.MINUTES, minutes=5),
]


def names() -> list[str]:
    return sorted(Schedule.objects.values_list("name", flat=True))


@pytest.mark.django_db
def test_registering_twice_leaves_one_of_each():
    Schedule.objects.filter(name__in=[j.name for j in JOBS]).delete()
    assert sorted(register_schedules(JOBS)) == ["hourly", "nightly", "often"]
    assert register_schedules(JOBS) == []
    for job in JOBS:
        assert Schedule.objects.filter(name=job.name).count() == 1


@pytest.mark.django_db
def test_an_operators_change_survives_registration():
    register_schedules(JOBS)
    Schedule.objects.filter(name="nightly").update(
        schedule_type=Schedule.WEEKLY, repeats=0
    )
    register_schedules(JOBS)
    nightly = Schedule.objects.get(name="nightly")
    assert (nightly.schedule_type, nightly.repeats) == (Schedule.WEEKLY, 0)


@pytest.mark.django_db
def test_a_new_schedule_repeats_forever_with_its_function_and_interval():
    register_schedules(JOBS)
    often = Schedule.objects.get(name="often")
    assert often.func == ANSWER
    assert (often.schedule_type, often.minutes, often.repeats) == ("I", 5, -1)


@pytest.mark.django_db
def test_migrate_registers_every_schedule_once():
    call_command("migrate", verbosity=0)
    call_command("migrate", verbosity=0)
    for job in SCHEDULES:
        assert Schedule.objects.filter(name=job.name, func=job.func).count() == 1


NOW = datetime(2026, 3, 5, 14, 30, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("job", "first"),
    [
        (JOBS[0], datetime(2026, 3, 6, 2, 0, tzinfo=UTC)),
        (JOBS[1], datetime(2026, 3, 5, 15, 17, tzinfo=UTC)),
        (JOBS[2], NOW),
        (
            ScheduledJob("late", "f", Schedule.DAILY, at=time(15, 5)),
            datetime(2026, 3, 5, 15, 5, tzinfo=UTC),
        ),
        (
            ScheduledJob("soon", "f", Schedule.HOURLY, at=time(0, 45)),
            datetime(2026, 3, 5, 14, 45, tzinfo=UTC),
        ),
    ],
)
def test_the_first_run_is_the_next_matching_time(job, first):
    assert job.first_run(NOW) == first


def test_the_admin_index_links_to_the_background_task_pages(admin_client):
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "Background tasks" in page
    for model in ("schedule", "success", "failure", "ormq"):
        assert reverse(f"admin:django_q_{model}_changelist") in page


def test_the_three_housekeeping_jobs_are_scheduled_and_importable():
    from django.utils.module_loading import import_string

    names = {job.name for job in SCHEDULES}
    assert {"prune_results", "compact_rollups", "optimize_database"} <= names
    for job in SCHEDULES:
        assert callable(import_string(job.func))


@pytest.mark.django_db
def test_the_test_database_has_them_after_migrate():
    assert {"prune_results", "compact_rollups", "optimize_database"} <= set(names())
