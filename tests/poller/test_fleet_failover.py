"""Several real runpoller processes sharing the projects through shard
leases on PostgreSQL: one killed, one paused past its lease, one stopped
with SIGTERM; one result per project and window throughout."""

from __future__ import annotations

import json
import signal
import time
from datetime import timedelta

import pytest

from django.utils import timezone

from projects.models import PollResult
from tests.support.factories import quick_projects
from tests.support.fleet import (
    STARTUP,
    TICK,
    TTL,
    Poller,
    balanced_among,
    needs_postgresql,
    projects_held_by,
    seconds_until,
    unstored_requests,
    windows_checked,
)
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgresql,
    # Its own bound, as test_fleet_outage's: the pollers' start-up (up to
    # STARTUP on a loaded machine) comes before the clocks these tests
    # measure, and the suite's 120 s per test left too little for both.
    pytest.mark.timeout(300),
]

INTERVAL = 10


def test_pollers_survive_a_kill_and_a_pause_with_one_result_per_window(
    target_server, tmp_path
):
    projects = quick_projects(target_server, 60, interval=INTERVAL, timeout=2)
    pollers = [Poller(tmp_path, name) for name in ("a", "b", "c")]
    killed, paused, steady = pollers
    try:
        wait_until(lambda: all(p.started() for p in pollers), timeout=STARTUP)
        wait_until(lambda: balanced_among(*pollers), timeout=40)
        wait_until(lambda: PollResult.objects.count() >= len(projects), timeout=30)
        since = timezone.now()
        time.sleep(INTERVAL / 2)

        held_at_kill = projects_held_by(killed)
        killed.signal(signal.SIGKILL)
        after_kill = seconds_until(lambda: balanced_among(paused, steady))

        held_at_pause = projects_held_by(paused)
        paused.signal(signal.SIGSTOP)
        after_pause = seconds_until(lambda: balanced_among(steady))
        time.sleep(max(2 * TTL + 1 - after_pause, 0))
        paused.signal(signal.SIGCONT)
        wait_until(lambda: balanced_among(paused, steady), timeout=30)
        time.sleep(INTERVAL)
        until = timezone.now() - timedelta(seconds=INTERVAL)
        for poller in (paused, steady):
            assert poller.stop() == 0, poller.output()
    finally:
        for poller in pollers:
            poller.stop()

    checked = windows_checked(since, until, INTERVAL)
    unstored = unstored_requests(target_server)
    numbers = {
        **checked,
        "requests": target_server.count("/ok"),
        "results": PollResult.objects.count(),
        "double_requests": unstored.total(),
        "takeover_after_sigkill_s": after_kill,
        "takeover_after_sigstop_s": after_pause,
    }
    print("fleet failover:", json.dumps(numbers))
    assert checked["projects"] == len(projects)
    assert checked["missing"] == 0
    assert checked["extra"] == 0
    # A poll in flight (or not yet saved) when its poller was killed or
    # paused reached the target without a stored result, and the new owner
    # made it again. A poller holds at most one poll of a project at a
    # time, so each such project has at most one unstored request per
    # event it went through; no other project was polled twice.
    for project_id, count in unstored.items():
        events = (project_id in held_at_kill) + (project_id in held_at_pause)
        assert count <= events, (project_id, count, numbers)
    assert "Lost" in paused.output()


def test_sigterm_hands_over_with_no_gap_and_no_double_request(target_server, tmp_path):
    projects = quick_projects(target_server, 30, interval=INTERVAL, timeout=2)
    leaving, staying = Poller(tmp_path, "leaving"), Poller(tmp_path, "staying")
    try:
        wait_until(lambda: leaving.started() and staying.started(), timeout=STARTUP)
        wait_until(lambda: balanced_among(leaving, staying), timeout=40)
        wait_until(lambda: PollResult.objects.count() >= len(projects), timeout=30)
        since = timezone.now() - timedelta(seconds=INTERVAL)
        assert leaving.stop() == 0, leaving.output()
        handed_over = seconds_until(lambda: balanced_among(staying))
        time.sleep(2 * INTERVAL)
        until = timezone.now() - timedelta(seconds=INTERVAL / 2)
        assert staying.stop() == 0, staying.output()
    finally:
        leaving.stop()
        staying.stop()

    checked = windows_checked(since, until, INTERVAL)
    print("fleet sigterm:", json.dumps({**checked, "handed_over_s": handed_over}))
    assert checked["projects"] == len(projects)
    assert checked["windows"] >= 2 * len(projects)
    assert checked["missing"] == checked["extra"] == 0
    assert target_server.count("/ok") == PollResult.objects.count()
    assert handed_over <= TICK + 2
