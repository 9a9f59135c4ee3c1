"""Regions with real runpoller processes on PostgreSQL, each region's
pollers sending from their own loopback address (POLLER_SOURCE_ADDRESS)
to a target that answers by source address (docs/regions.md)."""

from __future__ import annotations

import json
import signal
from collections import Counter

import pytest

from django.db.models import Count
from django.utils import timezone

from projects.incidents.region_outages import watch_regions
from projects.models import (
    Incident,
    PollResult,
    Project,
    Region,
    ShardLease,
    Status,
)
from tests.support.alerting import make_channel, queued_events
from tests.support.factories import quick_projects
from tests.support.fleet import SHARDS, STARTUP, Poller, needs_postgresql
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgresql,
]

INTERVAL = 2
SOURCES = {"eu": "127.0.0.2", "us": "127.0.0.3", "ap": "127.0.0.4"}
SILENT = 12  # POLLER_SILENT_SECONDS for the pollers and the watcher


def region_poller(tmp_path, region: str, name: str | None = None) -> Poller:
    return Poller(
        tmp_path,
        name or region,
        POLLER_REGION=region,
        POLLER_SOURCE_ADDRESS=f"host!{SOURCES[region]}",
        POLLER_SILENT_SECONDS=str(SILENT),
        POLLER_RECHECK_SECONDS=str(INTERVAL),
    )


def watched_project(target_server, **fields) -> Project:
    (project,) = quick_projects(
        target_server, 1, path="/by-source", interval=INTERVAL, timeout=2
    )
    Project.objects.filter(pk=project.pk).update(**fields)
    project.channels.add(make_channel())
    return project


def results(region: str, **filters) -> int:
    return PollResult.objects.filter(region__name=region, **filters).count()


def duplicates() -> int:
    """Results beyond one per (project, region, window)."""
    counts = PollResult.objects.values("project", "region", "polled_at").annotate(
        n=Count("*")
    )
    return sum(row["n"] - 1 for row in counts)


def fail_from(target_server, *regions: str) -> None:
    target_server.status_by_source = {SOURCES[r]: 503 for r in regions}


def test_three_regions_open_one_incident_only_when_two_agree(target_server, tmp_path):
    project = watched_project(
        target_server, quorum=2, failure_threshold=2, recovery_threshold=1
    )
    pollers = [region_poller(tmp_path, region) for region in SOURCES]
    try:
        wait_until(lambda: all(results(r) >= 2 for r in SOURCES), timeout=60)
        seen = dict(target_server.sources)

        fail_from(target_server, "eu")
        before = results("eu", status=Status.DOWN)
        wait_until(lambda: results("eu", status=Status.DOWN) >= before + 4, timeout=60)
        one_region_incidents = Incident.objects.count()
        us_failures = results("us", status=Status.DOWN)

        fail_from(target_server, "eu", "us")
        wait_until(lambda: Incident.objects.exists(), timeout=60)
        opened_at_polls = PollResult.objects.count()
        wait_until(
            lambda: PollResult.objects.count() >= opened_at_polls + 6, timeout=60
        )
        incidents_while_down = Incident.objects.count()

        fail_from(target_server)
        wait_until(
            lambda: Incident.objects.filter(resolved_at__isnull=False).exists(),
            timeout=60,
        )
        for poller in pollers:
            assert poller.stop() == 0, poller.output()
    finally:
        for poller in pollers:
            poller.stop()

    incident = Incident.objects.get()
    numbers = {
        "results": PollResult.objects.count(),
        "by_region": dict(
            Counter(PollResult.objects.values_list("region__name", flat=True))
        ),
        "duplicates": duplicates(),
        "incident": incident.first_error,
        "events": queued_events(project=project),
    }
    print("regions quorum:", json.dumps(numbers))
    assert {SOURCES[r] for r in SOURCES} <= set(seen)  # each from its address
    assert one_region_incidents == 0
    assert us_failures == 0
    assert incidents_while_down == 1
    assert incident.first_error.startswith("eu: expected 200, got 503; us: ")
    assert "ap" not in incident.first_error
    assert incident.resolved_at is not None
    assert queued_events(project=project) == ["incident.opened", "incident.resolved"]
    assert numbers["duplicates"] == 0


def test_a_killed_poller_is_replaced_in_its_region_and_a_dark_region_stops_counting(
    target_server, tmp_path, settings
):
    settings.POLLER_SILENT_SECONDS = SILENT
    make_channel(is_default=True)
    # Three fail from eu later: fewer than the five that would make eu
    # blind (the "is it us?" rule). Quorum: a majority of the live regions.
    failing = quick_projects(target_server, 3, path="/by-source", interval=INTERVAL)
    projects = failing + quick_projects(target_server, 5, interval=INTERVAL)
    Project.objects.update(failure_threshold=2)
    killed, staying = (
        region_poller(tmp_path, "eu", "eu1"),
        region_poller(tmp_path, "eu", "eu2"),
    )
    us = region_poller(tmp_path, "us")
    pollers = [killed, staying, us]
    try:
        wait_until(lambda: held_in("eu") == {killed.pid, staying.pid}, timeout=60)
        wait_until(lambda: results("us") >= len(projects), timeout=60)
        killed.signal(signal.SIGKILL)
        wait_until(lambda: held_in("eu") == {staying.pid}, timeout=30)
        polled = results("eu")
        wait_until(lambda: results("eu") >= polled + 2 * len(projects), timeout=30)

        us.signal(signal.SIGKILL)
        us_seen = Region.objects.get(name="us").last_seen_at
        wait_until(
            lambda: (timezone.now() - us_seen).total_seconds() > SILENT + 6,
            timeout=60,
        )
        told = [watch_regions(now=timezone.now()) for _ in range(2)]

        fail_from(target_server, "eu")  # eu alone is every live region now
        wait_until(lambda: Incident.objects.count() == len(failing), timeout=60)
        assert staying.stop() == 0, staying.output()
    finally:
        for poller in pollers:
            poller.stop()

    failing_ids = [p.pk for p in failing]
    eu_requests = target_server.sources[SOURCES["eu"]]
    eu_stored = results("eu", project__in=failing_ids)
    numbers = {
        "eu_requests_beyond_results": eu_requests - eu_stored,
        "results_eu": results("eu"),
        "results_us": results("us"),
        "duplicates": duplicates(),
        "told": told,
    }
    print("regions takeover:", json.dumps(numbers))
    assert numbers["duplicates"] == 0
    assert told == [["us dark"], []]
    # At most one poll in flight per project was lost with the killed
    # poller and made again by the other: no project was polled twice.
    assert 0 <= numbers["eu_requests_beyond_results"] <= len(failing)
    assert queued_events(event="poller.silent") == ["poller.silent"]
    # eu is the one live region: it decides alone, as a single-region
    # install does (its texts name no region).
    assert {i.project_id for i in Incident.objects.all()} == {p.pk for p in failing}
    assert all("503" in i.first_error for i in Incident.objects.all())


def held_in(region: str) -> set[int]:
    leases = ShardLease.objects.filter(
        region__name=region, expires_at__gt=timezone.now()
    )
    pids = Counter(leases.values_list("owner__pid", flat=True))
    return set(pids) if sum(pids.values()) == SHARDS else set()


def test_a_region_that_cannot_reach_most_targets_is_held(target_server, tmp_path):
    make_channel(is_default=True)
    # Quorum 1: any one region could open an incident, were it not blind.
    projects = quick_projects(target_server, 6, path="/by-source", interval=INTERVAL)
    Project.objects.update(quorum=1, failure_threshold=3)
    for project in projects:
        project.channels.add(make_channel())
    pollers = [region_poller(tmp_path, region) for region in ("eu", "us")]
    try:
        # The pollers' start-up first: its time is CPU's, not the test's.
        wait_until(lambda: all(p.started() for p in pollers), timeout=STARTUP)
        wait_until(lambda: all(results(r) >= 2 * len(projects) for r in ("eu", "us")))
        fail_from(target_server, "eu")
        failed = results("eu", status=Status.DOWN)
        wait_until(
            lambda: results("eu", status=Status.DOWN) >= failed + 5 * len(projects),
            timeout=60,
        )
        blind = Region.objects.get(name="eu").blind_since is not None
        incidents_while_blind = Incident.objects.count()

        fail_from(target_server)
        wait_until(
            lambda: Region.objects.get(name="eu").blind_since is None, timeout=60
        )
        for poller in pollers:
            assert poller.stop() == 0, poller.output()
    finally:
        for poller in pollers:
            poller.stop()

    told = queued_events(event__startswith="monitor.")
    print("regions blind:", json.dumps({"blind": blind, "told": told}))
    assert blind
    assert incidents_while_blind == 0
    assert Incident.objects.count() == 0
    assert told == ["monitor.unreachable", "monitor.reachable"]
