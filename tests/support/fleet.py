"""Real runpoller processes sharing shard leases on PostgreSQL, and what
the tests read from the database about them (tests/poller/test_fleet_*.py)."""

from __future__ import annotations

import itertools
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
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until

# Several pollers share the projects only on PostgreSQL; SQLite keeps one
# poller (polling/sqlite_lock.py).
needs_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="shard leases need PostgreSQL"
)

SHARDS = 16
TTL = 3.0
TICK = 1.0
# The setup of a poller's processes (Django in runpoller and in its
# writer's child, 1.5 s of CPU each), which only CPU time decides: 30-50 s
# of wall time for three pollers on a loaded 2-core machine.
STARTUP = 150


class Poller:
    """One runpoller process with short leases; `env` overrides its
    environment (e.g. DATABASE_URL, POLLER_LEASE_TTL)."""

    def __init__(self, log_dir: Path, name: str, **env: str) -> None:
        self.log = log_dir / f"{name}.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runpoller"],
                cwd=ROOT,
                env=process_env(
                    **{
                        "POLLER_CONTROL_BIND": "127.0.0.1:0",
                        "POLLER_SHARDS": str(SHARDS),
                        "POLLER_LEASE_TTL": str(TTL),
                        "POLLER_LEASE_TICK": str(TICK),
                        "LOG_LEVEL": "INFO",
                        **env,
                    }
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def started(self) -> bool:
        """Whether its coordinator has started (Django set up in it and in
        its writer's child): leases and polls run from then on."""
        return "Poller started with" in self.output()

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
        return self.wait()

    def wait(self) -> int:
        """Its exit status, once it has ended (killed after 30 s)."""
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.kill()

    def output(self) -> str:
        return self.log.read_text()


def stop_all(pollers: list[Poller]) -> list[int]:
    """Stop every poller side by side (each saves and hands over on its
    own); their exit statuses. One SIGTERM each: a second one makes a
    poller exit at once, with status 1."""
    for poller in pollers:
        if poller.alive():
            poller.signal(signal.SIGTERM)
    return [poller.wait() for poller in pollers]


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


def stored_windows(since, until) -> dict[int, list]:
    """Project id -> the windows of its results in [since, until), sorted."""
    by_project = defaultdict(list)
    rows = PollResult.objects.filter(polled_at__gte=since, polled_at__lt=until)
    for project_id, at in rows.values_list("project_id", "polled_at"):
        by_project[project_id].append(at)
    return {pk: sorted(times) for pk, times in by_project.items()}


def windows_checked(since, until, interval: float) -> dict:
    """Every project's stored windows in [since, until): each follows the
    previous one by exactly the interval (none missing, none extra)."""
    by_project = stored_windows(since, until)
    missing = extra = windows = 0
    step = timedelta(seconds=interval)
    for times in by_project.values():
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
