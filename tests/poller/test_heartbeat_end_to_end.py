"""A heartbeat project with a running poller: down within interval + grace
after the last ping, up on the next ping."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.core.cache import cache
from django.urls import reverse

from projects.models import PollResult, Project
from tests.support.waiting import wait_until

INTERVAL, GRACE = 2, 1  # seconds; saved around the admin's 10 s minimum
# The poller checks at the deadline; the writer saves within 0.5 s.
LATENESS = timedelta(seconds=1.5)


@pytest.fixture
def heartbeat(running_poller, make_project):
    cache.clear()
    project = make_project(kind="heartbeat", url="")
    Project.objects.filter(pk=project.pk).update(
        interval=INTERVAL, interval_unit="seconds", grace_seconds=GRACE
    )
    project.refresh_from_db()
    return project


def results(project: Project, status: str):
    return PollResult.objects.filter(project=project, status=status).order_by(
        "polled_at"
    )


def test_it_goes_down_when_no_ping_comes_and_up_on_the_next(
    client, running_poller, heartbeat
):
    url = reverse("pings:ping", args=[heartbeat.ping_key])
    assert client.get(url).status_code == 200
    running_poller.coordinator.sync_project(heartbeat.pk)
    last_ping = results(heartbeat, "up").last().polled_at
    deadline = last_ping + timedelta(seconds=INTERVAL + GRACE)

    wait_until(results(heartbeat, "down").exists, timeout=INTERVAL + GRACE + 3)

    missed = results(heartbeat, "down").first()
    assert deadline <= missed.polled_at <= deadline + LATENESS
    assert missed.error_message == "no ping within 3 s"
    heartbeat.refresh_from_db()
    assert heartbeat.last_status == "down"

    assert client.post(url, data=b"back", content_type="text/plain").status_code == 200
    heartbeat.refresh_from_db()
    assert heartbeat.last_status == "up"
    assert results(heartbeat, "up").last().error_message == "back"


def test_a_ping_before_the_deadline_moves_the_check_later(
    client, running_poller, heartbeat
):
    url = reverse("pings:ping", args=[heartbeat.ping_key])
    client.get(url)
    running_poller.coordinator.sync_project(heartbeat.pk)
    first = results(heartbeat, "up").last().polled_at
    # Ping again before the deadline the poller knows of (first + 3 s); the
    # poller hears nothing of it until its check finds the deadline moved.
    # At once, not after a sleep: a ping meant for a second before the
    # deadline came after it on a loaded machine, and the check went down.
    # A stale check would be stored at first + 3 s, its deadline to the
    # microsecond, before the one asserted below however close the pings.
    wait_until(lambda: running_poller.coordinator.target(heartbeat.pk) is not None)
    client.get(url)
    second = results(heartbeat, "up").last().polled_at
    assert second > first

    wait_until(results(heartbeat, "down").exists, timeout=INTERVAL + GRACE + 4)

    missed = results(heartbeat, "down").first()
    deadline = second + timedelta(seconds=INTERVAL + GRACE)
    assert deadline <= missed.polled_at <= deadline + LATENESS
    assert results(heartbeat, "down").count() == 1
