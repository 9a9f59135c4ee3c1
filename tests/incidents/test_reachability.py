"""Is it us? Most targets failing at once holds the down notifications."""

from __future__ import annotations

from datetime import timedelta

import pytest

from polling.store import DatabaseResultStore
from projects.incidents.reachability import is_cut_off
from projects.models import MaintenanceWindow, MonitorOutage, Notification
from tests.support.alerting import make_channel, queued
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(make_project):
    """Ten projects confirmed down by one failed poll, each with its own
    channel, and one default channel for the monitor's own news."""
    projects = [make_project(failure_threshold=1) for _ in range(10)]
    for project in projects:
        project.channels.add(make_channel())
    return projects


@pytest.fixture
def default_channel(db):
    return make_channel(is_default=True)


def save(projects, *, up: bool, at: float) -> None:
    DatabaseResultStore().save([outcome(p.pk, up=up, at=at) for p in projects])


@pytest.mark.parametrize(
    ("failing", "enabled", "cut_off"),
    [(4, 6, False), (5, 10, False), (5, 9, True), (6, 10, True), (0, 0, False)],
)
def test_more_than_half_and_at_least_five(failing, enabled, cut_off):
    assert is_cut_off(failing=failing, enabled=enabled) is cut_off


def test_a_storm_holds_the_openings_and_tells_the_default_channels_once(
    fleet, default_channel
):
    save(fleet[:6], up=False, at=0)
    save(fleet[:6], up=False, at=20)

    outage = MonitorOutage.objects.get()
    assert outage.kind == "unreachable"
    assert outage.ended_at is None
    assert outage.detail == {"failing": 6, "enabled": 10}
    assert queued(channel=default_channel) == [("monitor.unreachable", "pending")]
    assert queued(event="incident.opened") == [("incident.opened", "held")] * 6


def test_when_it_clears_held_openings_go_out_or_are_dropped(fleet, default_channel):
    save(fleet[:6], up=False, at=0)

    save(fleet[:4], up=True, at=20)

    outage = MonitorOutage.objects.get()
    assert outage.ended_at == T0 + timedelta(seconds=20)
    assert queued(channel=default_channel) == [
        ("monitor.unreachable", "pending"),
        ("monitor.reachable", "pending"),
    ]
    recovered = Notification.objects.filter(project__in=fleet[:4])
    still_down = Notification.objects.filter(project__in=fleet[4:6])
    # Nobody heard of the four that came back, so nothing more is said.
    assert set(recovered.values_list("event", "state")) == {
        ("incident.opened", "dropped")
    }
    assert set(still_down.values_list("event", "state")) == {
        ("incident.opened", "pending")
    }


def test_openings_queued_just_before_the_storm_is_noticed_are_held(
    fleet, default_channel
):
    save(fleet[:2], up=False, at=0)
    assert queued(event="incident.opened") == [("incident.opened", "pending")] * 2

    save(fleet[2:6], up=False, at=20)

    assert queued(event="incident.opened") == [("incident.opened", "held")] * 6


def test_a_few_failures_are_just_failures(fleet, default_channel):
    save(fleet[:5], up=False, at=0)

    assert MonitorOutage.objects.count() == 0
    assert queued(event="incident.opened") == [("incident.opened", "pending")] * 5
    assert queued(channel=default_channel) == []


def test_projects_under_maintenance_are_left_out(fleet, default_channel):
    window = MaintenanceWindow.objects.create(
        name="move", starts_at=T0, ends_at=T0 + timedelta(hours=1)
    )
    window.projects.add(*fleet[6:])

    save(fleet[:5], up=False, at=0)

    # 5 of 10 would not be more than half; 5 of the 6 that count are.
    assert MonitorOutage.objects.get().detail == {"failing": 5, "enabled": 6}
