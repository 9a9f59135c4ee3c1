"""Several real runpoller processes sharing the projects through shard
leases on PostgreSQL: one killed, one paused past its lease, one stopped
with SIGTERM; one result per project and window throughout."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from django.db import connection
from django.utils import timezone

from polling.engine.shards import shard_of
from projects.models import PollResult, Project, ShardLease
from tests.factories import quick_projects
from tests.processes import ROOT, process_env
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="shard leases need PostgreSQL"
    ),
]

INTERVAL = 10
SHARDS = 16
TTL = 3.0
TICK = 1.0


class Poller:
    def __init__(self, log_dir: Path, name: str) -> None:
        self.log = log_dir / f"{name}.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runpoller"],
                cwd=ROOT,
                env=process_env(
                    POLLER_CONTROL_BIND="127.0.0.1:0",
                    POLLER_SHARDS=str(SHARDS),
                    POLLER_LEASE_TTL=str(TTL),
                    POLLER_LEASE_TICK=str(TICK),
                    LOG_LEVEL="INFO",
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.kill()

    def output(self) -> str:
        return self.log.read_text()


def owners() -> dict[int, int]:
    """pid -> shards it holds with an unexpired lease."""
    held: dict[int, int] = defaultdict(int)
    leases = ShardLease.objects.filter(expires_at__gt=timezone.now())
    for pid in leases.values_list("owner__pid", flat=True):
        held[pid] += 1
    return dict(held)


def projects_held_by(poller: Poller) -> set[int]:
    """Ids of the projects in the shards `poller` holds now."""
    shards = set(
        ShardLease.objects.filter(
            owner__pid=poller.pid, expires_at__gt=timezone.now()
        ).values_list("shard", flat=True)
    )
    return {
        pk
        for pk in Project.objects.values_list("pk", flat=True)
        if shard_of(pk, SHARDS) in shards
    }


def unstored_requests(target_server) -> Counter[int]:
    """Project id -> requests the target answered beyond the stored results."""
    ids_by_path = {
        urlsplit(url)._replace(scheme="", netloc="").geturl(): pk
        for pk, url in Project.objects.values_list("pk", "url")
    }
    requests = Counter(ids_by_path[r.path] for r in target_server.requests)
    results = Counter(PollResult.objects.values_list("project_id", flat=True))
    return requests - results


def balanced_among(*pollers: Poller) -> bool:
    held = owners()
    pids = {p.pid for p in pollers}
    return set(held) == pids and sum(held.values()) == SHARDS


def seconds_until(condition, timeout: float = 30) -> float:
    started = time.monotonic()
    wait_until(condition, timeout=timeout)
    return round(time.monotonic() - started, 1)


def windows_checked(since, until) -> dict:
    """Every project's stored windows in [since, until): each follows the
    previous one by exactly the interval (none missing, none extra)."""
    by_project = defaultdict(list)
    rows = PollResult.objects.filter(polled_at__gte=since, polled_at__lt=until)
    for project_id, at in rows.values_list("project_id", "polled_at"):
        by_project[project_id].append(at)
    missing = extra = windows = 0
    step = timedelta(seconds=INTERVAL)
    for times in by_project.values():
        times.sort()
        windows += len(times)
        for before, after in itertools.pairwise(times):
            gap = after - before
            if gap < step:
                extra += 1
            elif gap > step:
                missing += round(gap / step) - 1
    return {
        "projects": len(by_project),
        "windows": windows,
        "missing": missing,
        "extra": extra,
    }


def test_pollers_survive_a_kill_and_a_pause_with_one_result_per_window(
    target_server, tmp_path
):
    projects = quick_projects(target_server, 60, interval=INTERVAL, timeout=2)
    pollers = [Poller(tmp_path, name) for name in ("a", "b", "c")]
    killed, paused, steady = pollers
    try:
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

    checked = windows_checked(since, until)
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

    checked = windows_checked(since, until)
    print("fleet sigterm:", json.dumps({**checked, "handed_over_s": handed_over}))
    assert checked["projects"] == len(projects)
    assert checked["windows"] >= 2 * len(projects)
    assert checked["missing"] == checked["extra"] == 0
    assert target_server.count("/ok") == PollResult.objects.count()
    assert handed_over <= TICK + 2
