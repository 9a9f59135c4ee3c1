"""Incidents as the result writer decides them, through the real store.

A script reads left to right, one token per step:
  "ddu"  one batch with three polls (u up, d down), 20 s apart;
  "|"    a restart: a new store and a new database connection, so only
         what the database holds carries over;
  "["    a maintenance window starts with the next poll; "]" it ends.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection

from polling.store import DatabaseResultStore
from projects.models import Incident, MaintenanceWindow, Project
from tests.support.alerting import make_channel, queued_events
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db

STEP = 20


def play(project: Project, script: str) -> list:
    """Run the script; returns the times of its polls."""
    times, windows, batches = _plan(script)
    for start, end in windows:
        window = MaintenanceWindow.objects.create(
            name="deploy", starts_at=start, ends_at=end
        )
        window.projects.add(project)
    store = DatabaseResultStore()
    for batch in batches:
        if batch == "|":
            store.close()
            store = DatabaseResultStore()
            continue
        store.save(
            [
                outcome(project.pk, up=up, at=at, code=200 if up else 503)
                for up, at in batch
            ]
        )
    return times


def _plan(script: str):
    """Poll times, maintenance windows and batches of a script."""
    times, windows, batches, opened = [], [], [], None
    for token in script.split():
        if token == "[":
            opened = len(times)
        elif token == "]":
            windows.append((opened, len(times)))
            opened = None
        elif token == "|":
            batches.append(token)
        else:
            batch = []
            for mark in token:
                batch.append((mark == "u", STEP * len(times)))
                times.append(T0 + timedelta(seconds=STEP * len(times)))
            batches.append(batch)
    if opened is not None:
        windows.append((opened, len(times) + 100))
    moment = lambda index: T0 + timedelta(seconds=STEP * index)  # noqa: E731
    return times, [(moment(a), moment(b)) for a, b in windows], batches


OPENED, RESOLVED = "incident.opened", "incident.resolved"


@pytest.mark.parametrize(
    ("thresholds", "script", "events", "state"),
    [
        ((3, 1), "d d", [], "pending"),
        ((3, 1), "d d d", [OPENED], "down"),
        ((3, 1), "ddd", [OPENED], "down"),
        ((3, 1), "d d d u", [OPENED, RESOLVED], "up"),
        ((3, 1), "d | d | d", [OPENED], "down"),
        ((3, 1), "d d d | d d | d u", [OPENED, RESOLVED], "up"),
        ((3, 1), "d d u d d", [], "pending"),
        ((1, 1), "d u d u", [OPENED, RESOLVED, OPENED, RESOLVED], "up"),
        ((1, 1), "dudu", [OPENED, RESOLVED, OPENED, RESOLVED], "up"),
        ((1, 1), "d udu", [OPENED, RESOLVED, OPENED, RESOLVED], "up"),
        ((3, 2), "ddd u | d u u", [OPENED, RESOLVED], "up"),
        ((3, 2), "ddd u", [OPENED], "down"),
        ((3, 1), "[ d d d d d ]", [], "up"),
        ((3, 1), "[ d d d d ] d d", [], "pending"),
        ((3, 1), "[ d d d d ] d d d", [OPENED], "down"),
        ((3, 1), "d d d [ u u | u ]", [OPENED], "down"),
        ((3, 1), "d d d [ u u ] u", [OPENED, RESOLVED], "up"),
        ((3, 1), "d [ d d ] d", [], "pending"),
    ],
)
def test_scripts_give_exactly_these_events(
    transactional_db, make_project, thresholds, script, events, state
):
    failure, recovery = thresholds
    project = make_project(failure_threshold=failure, recovery_threshold=recovery)
    project.channels.add(make_channel())
    if script.startswith("["):
        # A project is up before its first window in these scripts.
        Project.objects.filter(pk=project.pk).update(state="up")

    play(project, script)

    assert queued_events(project=project) == events
    project.refresh_from_db()
    assert project.state == state
    assert Incident.objects.filter(resolved_at=None).count() == (state == "down")


def test_an_incident_records_its_streak(make_project):
    project = make_project(failure_threshold=3)
    store = DatabaseResultStore()
    store.save([outcome(project.pk, up=True, at=0)])
    store.save([outcome(project.pk, up=False, at=20, code=503)])
    store.save([outcome(project.pk, up=False, at=40, error="timed out after 10 s")])
    store.save([outcome(project.pk, up=False, at=60, code=502)])
    store.save([outcome(project.pk, up=False, at=80, code=500)])
    store.save([outcome(project.pk, up=True, at=100)])

    incident = Incident.objects.get()
    assert incident.started_at == T0 + timedelta(seconds=20)
    assert incident.confirmed_at == T0 + timedelta(seconds=60)
    assert incident.resolved_at == T0 + timedelta(seconds=100)
    assert incident.first_error == "expected 200, got 503"
    assert incident.last_error == "expected 200, got 500"
    assert incident.failed_polls == 4


def test_maintenance_delays_the_incident_until_after_the_window(make_project):
    project = make_project(failure_threshold=3)
    times = play(project, "[ d d d d ] d d d")

    incident = Incident.objects.get()
    assert incident.started_at == times[4]
    assert incident.confirmed_at == times[6]


def test_a_restart_reads_the_streak_from_the_database(transactional_db, make_project):
    project = make_project(failure_threshold=3)
    DatabaseResultStore().save([outcome(project.pk, up=False, at=0)])
    connection.close()
    DatabaseResultStore().save([outcome(project.pk, up=False, at=20)])

    project.refresh_from_db()
    assert (project.state, project.consecutive_failures) == ("pending", 2)
    assert project.failing_since == T0


def test_the_opened_payload_describes_the_incident(make_project, settings):
    settings.SITE_URL = "https://status.example.test"
    project = make_project(name="shop", url="http://127.0.0.1:9/shop")
    channel = make_channel()
    project.channels.add(channel)
    play(project, "ddd")

    notification = project.notifications.get()
    incident = Incident.objects.get()
    assert notification.key == f"incident.opened:{incident.pk}:{channel.pk}"
    assert notification.state == "pending"
    payload = notification.payload
    assert payload["version"] == 1
    assert payload["event"] == "incident.opened"
    assert payload["project"] == {
        "id": project.pk,
        "name": "shop",
        "url": "http://127.0.0.1:9/shop",
    }
    assert payload["incident"]["started_at"] == T0.isoformat()
    assert payload["incident"]["duration_seconds"] == 40
    assert payload["incident"]["first_error"] == "expected 200, got 503"
    assert payload["links"]["project"] == (
        f"https://status.example.test/projects/{project.pk}/"
    )
    assert payload["links"]["acknowledge"].startswith(
        "https://status.example.test/incidents/acknowledge/"
    )


def test_outcomes_of_deleted_projects_open_nothing(make_project):
    project = make_project(failure_threshold=1)
    gone = project.pk
    project.delete()

    DatabaseResultStore().save([outcome(gone, up=False)])

    assert Incident.objects.count() == 0


def test_projects_that_stay_down_extend_their_own_incidents(make_project):
    """Several projects, several failed polls each in one batch: each
    incident counts its own."""
    first, second = make_project(failure_threshold=1), make_project(failure_threshold=1)
    store = DatabaseResultStore()
    store.save([outcome(p.pk, up=False, at=0) for p in (first, second)])

    store.save(
        [
            outcome(first.pk, up=False, at=20, code=502),
            outcome(first.pk, up=False, at=40, code=504),
            outcome(second.pk, up=False, at=20, code=500),
        ]
    )

    incidents = {i.project_id: i for i in Incident.objects.all()}
    assert len(incidents) == 2
    assert incidents[first.pk].failed_polls == 3
    assert incidents[first.pk].last_error == "expected 200, got 504"
    assert incidents[second.pk].failed_polls == 2
    assert incidents[second.pk].last_error == "expected 200, got 500"


def test_a_down_project_whose_incident_was_removed_gets_a_new_one(make_project):
    """Someone deleted the open incident: the next failed poll opens a new
    one and says so, while the other project's incident goes on."""
    lost, kept = make_project(failure_threshold=1), make_project(failure_threshold=1)
    lost.channels.add(make_channel())
    store = DatabaseResultStore()
    store.save([outcome(p.pk, up=False, at=0) for p in (lost, kept)])
    Incident.objects.filter(project=lost).delete()

    store.save([outcome(p.pk, up=False, at=20) for p in (lost, kept)])

    renewed = Incident.objects.get(project=lost)
    assert renewed.confirmed_at == T0 + timedelta(seconds=20)
    assert renewed.resolved_at is None
    assert Incident.objects.get(project=kept).failed_polls == 2
    assert queued_events(incident=renewed) == [OPENED]
