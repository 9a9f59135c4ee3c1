"""PostgreSQL goes away mid-run under three real runpoller processes (a
proxy between them and the server cuts every connection and refuses new
ones for longer than the lease TTL): every poller recovers, nothing is
missing beyond the outage, nothing is duplicated."""

from __future__ import annotations

import itertools
import json
import time
from datetime import datetime, timedelta

import pytest

from django.db import connection
from django.utils import timezone

from polling.leases import fair_share
from projects.models import PollResult, ShardLease
from tests.support.factories import quick_projects
from tests.support.fleet import (
    SHARDS,
    STARTUP,
    TTL,
    Poller,
    balanced_among,
    needs_postgresql,
    owners,
    projects_held_by,
    stop_all,
    stored_windows,
    unstored_requests,
)
from tests.support.processes import database_url
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgresql,
    # Its own bound: about 60 s of the clocks it tests (balancing ticks, two
    # intervals polled before the outage, the outage, TTL and three
    # intervals after it), after three runpoller processes and their
    # writers' children have set Django up (1.5 s of CPU each, six times:
    # 30-50 s of wall time on a loaded 2-core machine, measured at a load
    # of 13). The suite's 120 s per test left too little for both.
    pytest.mark.timeout(300),
]

INTERVAL = 5
PROJECTS = 60
# Down for longer than the TTL, so every lease really expires.
OUTAGE = TTL + 2


def missing_windows(times: list[datetime], since, until) -> list[datetime]:
    """The windows in [since, until) that `times` (sorted) leave out, on
    the grid of the stored ones: between two stored windows, every step
    that fits before the later one (a poller that starts a project afresh
    puts it on a new grid, at least two steps on)."""
    step = timedelta(seconds=INTERVAL)
    missing = []
    at = times[0] - step
    while at >= since:
        missing.append(at)
        at -= step
    for before, after in zip(times, [*times[1:], until + step], strict=True):
        at = before + step
        while at <= after - step / 2 and at < until:
            missing.append(at)
            at += step
    return missing


def duplicates(times: list[datetime]) -> int:
    """Results closer together than one interval: two in one window."""
    step = timedelta(seconds=INTERVAL)
    return sum(b - a < step for a, b in itertools.pairwise(times))


def stored_since(pollers: list[Poller], at) -> bool:
    """Whether each poller has stored a result of one of its shards'
    projects polled at or after `at`."""
    recent = set(
        PollResult.objects.filter(polled_at__gte=at).values_list(
            "project_id", flat=True
        )
    )
    return all(projects_held_by(poller) & recent for poller in pollers)


def polled_every_project_since(at) -> bool:
    polled = PollResult.objects.filter(polled_at__gte=at).values("project_id")
    return polled.distinct().count() == PROJECTS


def seconds_before(at: datetime) -> float:
    return max((at - timezone.now()).total_seconds(), 0.0)


def shard_owners() -> dict[int, int]:
    """Shard -> pid of the poller holding it now."""
    leases = ShardLease.objects.filter(expires_at__gt=timezone.now())
    return dict(leases.values_list("shard", "owner__pid"))


def test_every_poller_recovers_from_a_database_outage(target_server, tmp_path):
    quick_projects(target_server, PROJECTS, interval=INTERVAL, timeout=2)
    server = connection.settings_dict
    upstream = (server["HOST"] or "127.0.0.1", int(server["PORT"] or 5432))
    with TcpProxy(upstream) as proxy:
        url = database_url(host="127.0.0.1", port=proxy.port)
        pollers = [Poller(tmp_path, name, DATABASE_URL=url) for name in "abc"]
        try:
            wait_until(lambda: all(p.started() for p in pollers), timeout=STARTUP)
            wait_until(lambda: balanced_among(*pollers), timeout=40)
            # Past the first polls and hand-overs: every project polled
            # since the fleet was balanced.
            balanced_at = timezone.now()
            wait_until(lambda: polled_every_project_since(balanced_at), timeout=20)
            since = timezone.now()
            wait_until(
                lambda: polled_every_project_since(since + timedelta(seconds=INTERVAL)),
                timeout=3 * INTERVAL,
            )

            before = shard_owners()
            down_at = timezone.now()
            proxy.down()
            time.sleep(OUTAGE)
            expired = owners()
            up_at, came_back = timezone.now(), time.monotonic()
            proxy.up()
            wait_until(
                lambda: balanced_among(*pollers) and stored_since(pollers, up_at),
                timeout=30,
            )
            recovery = round(time.monotonic() - came_back, 1)
            after = shard_owners()

            # While the proxy is down nothing is leased or saved, and the
            # scheduler dispatches nothing once its leases can no longer be
            # trusted. When it is back every lease has expired: each poller
            # takes its own shards back at its next tick, a poller that
            # does not come back loses its shards one tick later, and the
            # fleet is balanced again within three ticks (a tick to claim,
            # one to count the others, one to hand over), the TTL here. A
            # project then continues at the window after its last stored
            # one, or afresh within one interval (a whole window went by
            # unpolled). So windows from down_at until the TTL plus one
            # interval after the proxy came back may be missing, no others.
            outage_ends = up_at + timedelta(seconds=TTL + INTERVAL)
            until = outage_ends + timedelta(seconds=2 * INTERVAL)
            # Every project's first poll past `until` comes within an
            # interval of it and is saved within the next. The wait is
            # measured from `until`, not from the recovery: a fleet that
            # recovers sooner must not get less time for that poll.
            wait_until(
                lambda: polled_every_project_since(until),
                timeout=seconds_before(until + timedelta(seconds=2 * INTERVAL)),
            )
            alive = [poller.alive() for poller in pollers]
            held = owners()
            exits = stop_all(pollers)
        finally:
            for poller in pollers:
                poller.stop()

    missing = inside = doubled = windows = 0
    by_project = stored_windows(since, until)
    for times in by_project.values():
        windows += len(times)
        doubled += duplicates(times)
        for at in missing_windows(times, since, until):
            if down_at <= at < outage_ends:
                inside += 1
            else:
                missing += 1
    numbers = {
        "projects": len(by_project),
        "windows": windows,
        "missing_outside_outage": missing,
        "missing_inside_outage": inside,
        "duplicates": doubled,
        "recovery_s": recovery,
        "outage_s": round((up_at - down_at).total_seconds(), 1),
        "shards_moved": sum(before[s] != after.get(s) for s in before),
        "connections_cut": proxy.cut_connections,
        "connections_refused": proxy.refused,
        "double_requests": unstored_requests(target_server).total(),
    }
    print("fleet outage:", json.dumps(numbers))
    logs = "\n".join(poller.output()[-3000:] for poller in pollers)
    assert expired == {}, "leases outlived the outage"
    assert proxy.cut_connections > 0
    assert proxy.refused > 0
    assert alive == [True, True, True], logs
    assert set(held) == {poller.pid for poller in pollers}, held
    assert sum(held.values()) == SHARDS
    assert max(held.values()) <= fair_share(SHARDS, len(pollers)), held
    assert exits == [0, 0, 0], logs
    # Given back at SIGTERM, through connections the outage had cut.
    assert not ShardLease.objects.filter(owner__isnull=False).exists(), logs
    assert numbers["projects"] == PROJECTS
    assert missing == 0, numbers
    assert doubled == 0, numbers
