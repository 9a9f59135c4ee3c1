"""Benchmark: regions (issue #31, docs/regions.md).

    BENCH_DB_SUFFIX=regions /work/team/bin/run-bench \\
        .venv/bin/python bench/bench_regions.py

On PostgreSQL (a database of its own, created and dropped here):

1. writer: the result writer's cost per poll, in this process, for one
   region against three. The same projects and windows are saved in
   batches of 500 through DatabaseResultStore: once by the default region
   alone (the single-region path, as today), then by three live regions
   (the region step: per-region streaks and quorum). Reported: wall and
   CPU (this process) per poll, and the three-region cost against one's.
   The target: within 20 %.
2. pollers: three runpoller processes on this machine, one per region,
   sending from 127.0.0.2, .3 and .4 (POLLER_SOURCE_ADDRESS) to nginx on
   127.0.0.1, each region polling every project (default 30,000 at 60 s:
   1,500 polls/s in all). After --warmup seconds, --measure seconds are
   counted from the stored results: per region, the windows stored and
   the windows missed (a gap of more than one interval between two of a
   project's stored windows).

    --quick               1,000 projects, 20 s windows, short runs
    --part writer|pollers one part only
    --projects N --interval S --warmup S --measure S

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server,
BENCH_DB_SUFFIX names the database (monitor_bench_regions_<suffix>).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import (
    ROOT,
    django_env,
    drop_database,
    fresh_database_url,
    manage,
    raise_open_files_limit,
    setup_django,
)

REGIONS = {"eu": "127.0.0.2", "us": "127.0.0.3", "ap": "127.0.0.4"}
BATCH = 500


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    server = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432")
    suffix = os.environ.get("BENCH_DB_SUFFIX", "local")
    url = fresh_database_url(
        f"monitor_bench_regions_{suffix}", base=f"{server}/postgres"
    )
    try:
        manage(url, "migrate", "--no-input")
        setup_django(url)
        results = {}
        if args.part in ("writer", "all"):
            results["writer"] = measure_writer(args)
        if args.part in ("pollers", "all"):
            results["pollers"] = measure_pollers(args, url)
        print(json.dumps(results, indent=2))
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(url)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["writer", "pollers", "all"], default="all")
    parser.add_argument("--projects", type=int, default=30_000)
    parser.add_argument("--interval", type=int, default=60)
    parser.add_argument("--warmup", type=float, default=90)
    parser.add_argument("--measure", type=float, default=300)
    parser.add_argument("--writer-windows", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.projects, args.interval = 1_000, 20
        args.warmup, args.measure, args.writer_windows = 30, 60, 2
    return args


def make_projects(count: int, url_for) -> list[int]:
    from projects.models import Project

    Project.objects.all().delete()
    projects = Project.objects.bulk_create(
        Project(
            name=f"bench {i}",
            url=url_for(i),
            interval=60,
            interval_unit="seconds",
            timeout_seconds=5,
        )
        for i in range(count)
    )
    return [p.pk for p in projects]


def measure_writer(args) -> dict:
    """Saving the same windows from one region, then from three."""
    from django.utils import timezone

    from polling.engine.types import Outcome
    from polling.store import DatabaseResultStore
    from projects.models import DEFAULT_REGION_ID, Region

    ids = make_projects(args.projects, lambda i: f"http://127.0.0.1:9/{i}")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def outcomes(window: int) -> list[Outcome]:
        at = t0 + timedelta(seconds=args.interval * window)
        return [
            Outcome(project_id=pk, up=True, started_at=at, due_at=at, status_code=200)
            for pk in ids
        ]

    def run(stores: list, first_window: int) -> dict:
        polls, wall, cpu = 0, 0.0, 0.0
        for window in range(first_window, first_window + args.writer_windows):
            batch = outcomes(window)
            for store in stores:
                for start in range(0, len(batch), BATCH):
                    chunk = batch[start : start + BATCH]
                    began, began_cpu = time.perf_counter(), _cpu()
                    store.save(chunk)
                    wall += time.perf_counter() - began
                    cpu += _cpu() - began_cpu
                    polls += len(chunk)
        return {
            "polls": polls,
            "wall_us_per_poll": round(wall / polls * 1e6, 1),
            "client_cpu_us_per_poll": round(cpu / polls * 1e6, 1),
        }

    one = run([DatabaseResultStore(region_id=DEFAULT_REGION_ID)], 0)
    now = timezone.now()
    regions = [Region.objects.create(name=n, last_seen_at=now) for n in REGIONS]
    three = run(
        [DatabaseResultStore(region_id=r.pk) for r in regions], args.writer_windows
    )
    return {
        "one_region": one,
        "three_regions": three,
        "wall_ratio": round(three["wall_us_per_poll"] / one["wall_us_per_poll"], 2),
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure_pollers(args, url: str) -> dict:
    from nginx import NginxTarget

    from django.db import connection

    from projects.models import Project, Region

    with NginxTarget(workers=2) as nginx:
        make_projects(args.projects, lambda i: nginx.url(f"/?p={i}"))
        Project.objects.update(interval=args.interval)
        logs = Path(os.environ.get("TMPDIR", "/tmp"))
        pollers = [
            _poller(url, name, source, logs / f"bench-regions-{name}.log")
            for name, source in REGIONS.items()
        ]
        try:
            time.sleep(args.warmup)
            since = datetime.now(UTC)
            time.sleep(args.measure)
            until = datetime.now(UTC) - timedelta(seconds=args.interval)
        finally:
            for poller in pollers:
                poller.send_signal(signal.SIGTERM)
            for poller in pollers:
                poller.wait(120)
    names = dict(Region.objects.values_list("pk", "name"))
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT region_id, count(*),
                   coalesce(sum(greatest(round(extract(epoch FROM gap)
                       / %(interval)s) - 1, 0)), 0)
            FROM (
                SELECT region_id, polled_at - lag(polled_at) OVER (
                    PARTITION BY project_id, region_id ORDER BY polled_at) AS gap
                FROM projects_pollresult
                WHERE polled_at >= %(since)s AND polled_at < %(until)s
            ) windows
            GROUP BY region_id
            """,
            {"interval": args.interval, "since": since, "until": until},
        )
        per_region = {
            names[region]: {"windows": windows, "missed": int(missed)}
            for region, windows, missed in cursor.fetchall()
        }
    return {
        "projects": args.projects,
        "interval_s": args.interval,
        "polls_per_s_wanted": round(len(REGIONS) * args.projects / args.interval),
        "per_region": per_region,
    }


def _poller(url: str, region: str, source: str, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "runpoller", "--no-control"],
        cwd=ROOT,
        env=django_env(
            url,
            POLLER_REGION=region,
            POLLER_SOURCE_ADDRESS=f"host!{source}",
            MAX_CONCURRENT_HTTP="200",
            LOG_LEVEL="WARNING",
        ),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


if __name__ == "__main__":
    main()
