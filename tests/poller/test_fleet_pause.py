"""A paused poller costs no window (issue #39, item 10), with two real
runpoller processes on PostgreSQL: one is stopped with SIGSTOP right
after it renewed its leases, the other takes its shards over once they
expire, and every window of every project is stored once, counted in the
rows.

The interval is shorter than the lease TTL on purpose: by the time the
shards move, the window after the paused poller's last stored one is over
for many of its projects (those due in the first second of the pause, and
those whose poll it had not saved yet), every run, not only when the
ticks fall badly as with the defaults (TTL 15 s and 20 s intervals:
bench/bench_pause.py). Before the fix those projects started afresh on a
new grid and lost one or two windows each.
"""

from __future__ import annotations

import itertools
import signal
from collections import defaultdict
from datetime import datetime, timedelta

import pytest

from django.utils import timezone

from projects.models import PollResult, ShardLease
from tests.support.factories import quick_projects
from tests.support.fleet import (
    SHARDS,
    STARTUP,
    Poller,
    balanced_among,
    needs_postgresql,
)
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgresql,
    # Two runpoller processes and their writers' children set Django up
    # first (tests/fleet.py STARTUP); the clocks tested take about 25 s.
    pytest.mark.timeout(300),
]

INTERVAL = 6
# Longer than the interval (see the docstring); a move takes at most
# TTL + 2 ticks + the load, less than two intervals, so the fixed poller
# loses no window.
TTL = INTERVAL + 1
TICK = 1
PROJECTS = 40


def renewal_of(poller: Poller):
    """The latest expiry of the leases `poller` holds: it moves at every
    renewal."""
    leases = ShardLease.objects.filter(owner__pid=poller.pid)
    return max(leases.values_list("expires_at", flat=True), default=None)


def stored_since(moment: datetime) -> bool:
    """Whether every project has a window stored at or after `moment`."""
    recent = PollResult.objects.filter(polled_at__gte=moment)
    return recent.values("project_id").distinct().count() == PROJECTS


def windows(paused_at: datetime, until: datetime) -> dict:
    """Every project's windows from its last stored before the pause until
    `until`, on its grid (its last stored window plus whole intervals):
    how many are missing (not stored) and how many doubled (two stored
    closer than an interval). A project started afresh on a new grid shows
    as both."""
    step = timedelta(seconds=INTERVAL)
    by_project = defaultdict(list)
    for project_id, at in PollResult.objects.values_list("project_id", "polled_at"):
        by_project[project_id].append(at)
    missing = doubled = 0
    for times in by_project.values():
        before = max(at for at in times if at < paused_at)
        after = sorted(at for at in times if before < at < until)
        due = -((before - until) // step) - 1  # grid points in (before, until)
        twice = sum(b - a < step / 2 for a, b in itertools.pairwise(after))
        missing += max(due - (len(after) - twice), 0)
        doubled += twice
    return {"projects": len(by_project), "missing": missing, "doubled": doubled}


def test_a_poller_paused_past_its_leases_costs_no_window(target_server, tmp_path):
    quick_projects(target_server, PROJECTS, interval=INTERVAL, timeout=2)
    leases = {"POLLER_LEASE_TTL": str(TTL), "POLLER_LEASE_TICK": str(TICK)}
    paused, steady = [Poller(tmp_path, name, **leases) for name in ("paused", "on")]
    try:
        wait_until(lambda: paused.started() and steady.started(), timeout=STARTUP)
        wait_until(lambda: balanced_among(paused, steady), timeout=40)
        # Every project polled once, so each has a grid to go on from.
        started = timezone.now()
        wait_until(lambda: stored_since(started), timeout=3 * INTERVAL)

        # Paused right after a renewal: its leases run for a whole TTL.
        renewed = renewal_of(paused)
        wait_until(lambda: renewal_of(paused) != renewed, timeout=5 * TICK)
        paused.signal(signal.SIGSTOP)
        paused_at = timezone.now()
        wait_until(lambda: balanced_among(steady), timeout=TTL + 4 * TICK)
        moved_at = timezone.now()
        until = moved_at + timedelta(seconds=INTERVAL)
        wait_until(lambda: stored_since(until), timeout=3 * INTERVAL)
        paused.signal(signal.SIGCONT)
        for poller in (paused, steady):
            assert poller.stop() == 0, poller.output()
    finally:
        for poller in (paused, steady):
            poller.stop()

    counted = windows(paused_at, until)
    moved = (moved_at - paused_at).total_seconds()
    assert counted == {"projects": PROJECTS, "missing": 0, "doubled": 0}, (
        f"shards moved {moved:.1f} s after the pause; {SHARDS} shards",
        steady.output()[-3000:],
    )
