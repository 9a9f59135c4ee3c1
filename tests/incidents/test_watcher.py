"""The watcher is watched: silence of every poller is told once, and its
end once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.incidents.watcher import watch_pollers
from projects.models import MonitorOutage, PollerNode
from projects.schedules import SCHEDULES
from tests.support.alerting import make_channel, queued
from tests.support.outcomes import T0

pytestmark = pytest.mark.django_db


def node(name="web-1:42", *, seen_ago: float, stopped: bool = False) -> PollerNode:
    seen = T0 - timedelta(seconds=seen_ago)
    return PollerNode.objects.create(
        name=name,
        host="web-1",
        pid=42,
        started_at=seen - timedelta(hours=1),
        last_seen_at=seen,
        stopped_at=seen if stopped else None,
    )


@pytest.fixture
def default_channel(db):
    return make_channel(is_default=True)


def test_nothing_to_watch_before_any_poller_ran(default_channel):
    assert watch_pollers(now=T0) == "no poller has ever reported"
    assert queued() == []


def test_a_poller_seen_lately_is_running(default_channel):
    node(seen_ago=60)

    assert watch_pollers(now=T0) == "running"
    assert queued() == []


def test_silence_is_told_once_and_its_end_once(default_channel, settings):
    settings.POLLER_SILENT_SECONDS = 120
    poller = node(seen_ago=121, stopped=True)

    assert watch_pollers(now=T0) == "silent"
    assert watch_pollers(now=T0 + timedelta(minutes=1)) == "still silent"
    outage = MonitorOutage.objects.get()
    assert (outage.kind, outage.started_at) == ("poller_silent", poller.last_seen_at)
    assert outage.detail["stopped_cleanly"] is True
    [silent] = default_channel.notifications.all()
    assert silent.event == "poller.silent"
    assert "No poller has reported for 2 min" in silent.payload["message"]

    PollerNode.objects.update(last_seen_at=T0 + timedelta(minutes=2))
    assert watch_pollers(now=T0 + timedelta(minutes=2)) == "back"
    assert watch_pollers(now=T0 + timedelta(minutes=3)) == "running"

    outage.refresh_from_db()
    assert outage.ended_at == T0 + timedelta(minutes=2)
    assert queued(channel=default_channel) == [
        ("poller.silent", "pending"),
        ("poller.back", "pending"),
    ]


def test_the_newest_of_several_pollers_counts(default_channel):
    node("old:1", seen_ago=3600)
    node("new:2", seen_ago=5)

    assert watch_pollers(now=T0) == "running"


def test_the_silence_threshold_is_a_setting(default_channel, settings):
    settings.POLLER_SILENT_SECONDS = 600
    node(seen_ago=300)

    assert watch_pollers(now=T0) == "running"


def test_rows_of_pollers_long_gone_are_removed(default_channel):
    node("gone:1", seen_ago=8 * 86400)
    node("here:2", seen_ago=5)

    watch_pollers(now=T0)

    assert list(PollerNode.objects.values_list("name", flat=True)) == ["here:2"]


def test_it_runs_every_minute_on_the_tasks_process():
    [job] = [job for job in SCHEDULES if job.name == "watch pollers"]

    assert job.func == "projects.incidents.watcher.watch_pollers"
    assert job.minutes == 1
