"""Reminders: once per reminder_minutes while an incident is open and not
acknowledged."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.models import Incident, MaintenanceWindow, Notification
from projects.notifications.reminders import queue_reminders


@pytest.fixture
def incident(make_project, clock):
    project = make_project()
    return Incident.objects.create(
        project=project,
        started_at=clock.now() - timedelta(minutes=2),
        confirmed_at=clock.now(),
        first_error="expected 200, got 503",
        last_error="expected 200, got 503",
    )


def reminders() -> list[Notification]:
    return list(Notification.objects.filter(event="incident.reminder").order_by("id"))


def test_one_reminder_per_period(incident, make_channel, clock):
    channel = make_channel(reminder_minutes=30)
    incident.project.channels.add(channel)

    clock.advance(29 * 60)
    assert queue_reminders(now=clock.now) == 0
    clock.advance(60)
    assert queue_reminders(now=clock.now) == 1
    assert queue_reminders(now=clock.now) == 0
    clock.advance(30 * 60)
    assert queue_reminders(now=clock.now) == 1

    rows = reminders()
    assert [row.channel for row in rows] == [channel, channel]
    assert rows[0].payload["event"] == "incident.reminder"
    assert rows[0].payload["incident"]["id"] == incident.pk
    assert rows[0].payload["incident"]["duration_seconds"] == 32 * 60


def test_after_a_long_gap_only_the_current_period_is_reminded(
    incident, make_channel, clock
):
    incident.project.channels.add(make_channel(reminder_minutes=10))

    clock.advance(65 * 60)

    assert queue_reminders(now=clock.now) == 1


def test_channels_without_reminders_or_disabled_get_none(incident, make_channel, clock):
    incident.project.channels.add(
        make_channel(reminder_minutes=0),
        make_channel(reminder_minutes=5, enabled=False),
    )

    clock.advance(3600)

    assert queue_reminders(now=clock.now) == 0


def test_acknowledged_or_resolved_incidents_get_none(incident, make_channel, clock):
    incident.project.channels.add(make_channel(reminder_minutes=5))
    clock.advance(600)

    Incident.objects.filter(pk=incident.pk).update(acknowledged_at=clock.now())
    assert queue_reminders(now=clock.now) == 0
    Incident.objects.filter(pk=incident.pk).update(
        acknowledged_at=None, resolved_at=clock.now()
    )
    assert queue_reminders(now=clock.now) == 0


@pytest.mark.parametrize("all_projects", [False, True])
def test_none_during_maintenance_and_the_due_one_after_it(
    incident, make_channel, clock, all_projects
):
    incident.project.channels.add(make_channel(reminder_minutes=10))
    window = MaintenanceWindow.objects.create(
        name="deploy",
        starts_at=clock.now() + timedelta(minutes=5),
        ends_at=clock.now() + timedelta(minutes=25),
        all_projects=all_projects,
    )
    if not all_projects:
        window.projects.add(incident.project)

    clock.advance(15 * 60)
    assert queue_reminders(now=clock.now) == 0
    clock.advance(10 * 60)
    assert queue_reminders(now=clock.now) == 1
