"""Incidents stay exactly-once when a batch fails half way, and when
several writers save outcomes of the same projects at the same time."""

from __future__ import annotations

import threading

import pytest

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.models import (
    Incident,
    MaintenanceWindow,
    MonitorOutage,
    Notification,
    PollResult,
    Region,
)
from projects.notifications import outbox
from tests.support.alerting import make_channel, queued
from tests.support.fleet import needs_postgresql
from tests.support.outcomes import outcome
from tests.support.waiting import wait_until


class Boom(Exception):
    pass


def test_an_error_after_the_polls_are_inserted_leaves_no_trace(
    db, make_project, monkeypatch
):
    project = make_project(failure_threshold=1)
    project.channels.add(make_channel())
    real_queue = outbox.queue_for_projects

    def queue_then_fail(*args, **kwargs):
        real_queue(*args, **kwargs)
        assert Notification.objects.count() == 1  # it got this far
        raise Boom

    monkeypatch.setattr(outbox, "queue_for_projects", queue_then_fail)

    with pytest.raises(Boom):
        DatabaseResultStore().save([outcome(project.pk, up=False)])

    assert PollResult.objects.count() == 0
    assert Incident.objects.count() == 0
    assert Notification.objects.count() == 0
    project.refresh_from_db()
    assert (project.state, project.consecutive_failures) == ("", 0)


def test_a_quiet_batch_costs_no_incident_queries(db, make_project):
    projects = [make_project() for _ in range(20)]
    store = DatabaseResultStore()
    store.save([outcome(p.pk, up=True, at=0) for p in projects])

    with CaptureQueriesContext(connection) as captured:
        store.save([outcome(p.pk, up=True, at=60) for p in projects])

    touched = " ".join(query["sql"] for query in captured)
    for model in (Incident, Notification, MonitorOutage):
        assert model._meta.db_table not in touched
    # Only the maintenance windows are asked for through the ORM (the
    # writer's own statements bypass it on PostgreSQL).
    assert MaintenanceWindow._meta.db_table in touched


def run_writers(batches_per_writer: list[list[list]]) -> None:
    """Each writer is a thread with its own connection saving its batches
    in order; all start together."""
    start = threading.Barrier(len(batches_per_writer))
    errors = []

    def write(batches):
        store = DatabaseResultStore()
        try:
            start.wait()
            for batch in batches:
                store.save(batch)
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            store.close()

    threads = [threading.Thread(target=write, args=(b,)) for b in batches_per_writer]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []


def test_two_writers_open_one_incident_and_queue_one_event(
    transactional_db, make_project
):
    projects = [make_project(failure_threshold=1) for _ in range(40)]
    default = make_channel(is_default=True)
    channel = make_channel()
    for project in projects:
        project.channels.add(channel)

    # Both writers save a failed poll of every project at once, in
    # opposite orders, three rounds each.
    run_writers(
        [
            [[outcome(p.pk, up=False, at=r * 20) for p in projects] for r in range(3)],
            [
                [outcome(p.pk, up=False, at=r * 20 + 1) for p in reversed(projects)]
                for r in range(3)
            ],
        ]
    )

    assert PollResult.objects.count() == 240
    assert Incident.objects.count() == 40
    assert Incident.objects.filter(failed_polls=6).count() == 40
    assert Notification.objects.filter(event="incident.opened").count() == 40
    assert MonitorOutage.objects.count() == 1
    assert queued(channel=default) == [("monitor.unreachable", "pending")]


def test_interleaved_writers_reach_the_threshold_once(transactional_db, make_project):
    projects = [make_project(failure_threshold=3) for _ in range(30)]
    channel = make_channel()
    for project in projects:
        project.channels.add(channel)

    run_writers(
        [
            [[outcome(p.pk, up=False, at=t)] for t in (0, 2, 4) for p in projects],
            [[outcome(p.pk, up=False, at=t)] for t in (1, 3, 5) for p in projects],
        ]
    )

    assert Incident.objects.count() == 30
    assert Notification.objects.filter(event="incident.opened").count() == 30
    assert set(Incident.objects.values_list("failed_polls", flat=True)) == {6}


@needs_postgresql
def test_a_region_that_waited_for_the_lock_decides_from_the_views_committed_meanwhile(
    transactional_db, make_project
):
    """Quorum 2 of 3: eu's failure is committed while us's writer waits for
    the project's row; us then sees it and opens the incident
    (docs/regions.md)."""
    make_channel(is_default=True)
    project = make_project(quorum=2, failure_threshold=1)
    now = timezone.now()
    eu, us, _ = (
        Region.objects.create(name=name, last_seen_at=now)
        for name in ("eu", "us", "ap")
    )
    failed = [outcome(project.pk, up=False)]
    errors = []

    def us_writes():
        store = DatabaseResultStore(region_id=us.pk)
        try:
            store.save(failed)
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            store.close()

    us_writer = threading.Thread(target=us_writes)
    with transaction.atomic():
        DatabaseResultStore(region_id=eu.pk).save(failed)  # holds the row
        us_writer.start()
        wait_until(lambda: waiting_for_a_lock() == 1, timeout=30)
    us_writer.join(30)

    assert errors == []
    assert Incident.objects.get().first_error.startswith("eu: ")


def waiting_for_a_lock() -> int:
    """Other connections to this database waiting for a lock."""
    with connection.cursor() as cursor:
        # Within a transaction the activity is read once, unless cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND wait_event_type = 'Lock' "
            "AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]
