"""Benchmark: does one runpoller keep N projects on time?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python bench/bench_poller.py --projects 1000 --interval 10

Creates a fresh database (PostgreSQL when DATABASE_URL points there, else a
temporary SQLite file), N projects against a local target process, runs
`manage.py runpoller` for --duration seconds, stops it with SIGTERM and
prints a markdown table: polls made, the target's request count, rows
written, skipped ticks, scheduling lag p50/p99 (the poller's last minute),
CPU and peak memory of the poller process.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

from harness import (
    ROOT,
    ProcessSample,
    TargetProcess,
    django_env,
    free_port,
    fresh_database_url,
    machine,
    manage,
    markdown_table,
    setup_django,
)

SUMMARY = re.compile(
    r"(?P<projects>\d+) projects, (?P<polls>\d+) polls .*?"
    r"(?P<written>\d+) written, (?P<waiting>\d+) waiting, "
    r"(?P<skipped>\d+) skipped, lag p50/p99 (?P<p50>[\d.]+)/(?P<p99>[\d.]+) ms"
)


def create_projects(target: TargetProcess, count: int, interval: int, path: str):
    from projects.models import Project

    Project.objects.bulk_create(
        (
            Project(
                name=f"bench {i}",
                url=target.url(f"{path}?p={i}"),
                interval=interval,
                interval_unit="seconds",
                timeout_seconds=min(10, interval),
            )
            for i in range(count)
        ),
        batch_size=5000,
    )


def run_poller(database_url: str, duration: float, max_concurrent: int) -> dict:
    # Its own control port: the default one may belong to another poller.
    env = django_env(
        database_url,
        MIN_POLL_INTERVAL="1",
        POLLER_CONTROL_BIND=f"127.0.0.1:{free_port()}",
    )
    started = time.monotonic()
    poller = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "runpoller",
            "--max-concurrent",
            str(max_concurrent),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    sample = ProcessSample(poller.pid)
    while time.monotonic() - started < duration:
        time.sleep(1)
        sample.read()
    sample.read()
    poller.send_signal(signal.SIGTERM)
    out, _ = poller.communicate(timeout=120)
    match = SUMMARY.search(out)
    if poller.returncode != 0 or not match:
        raise RuntimeError(f"runpoller failed ({poller.returncode}): {out}")
    return {
        **{k: float(v) if "." in v else int(v) for k, v in match.groupdict().items()},
        "cpu_percent": 100 * sample.cpu_seconds / (time.monotonic() - started),
        "peak_rss_mb": sample.peak_rss_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--interval", type=int, default=10, help="seconds")
    parser.add_argument("--duration", type=float, default=60, help="seconds")
    parser.add_argument("--max-concurrent", type=int, default=100)
    parser.add_argument("--path", default="/ok", help="target route, e.g. /delay/200")
    args = parser.parse_args()

    database_url = fresh_database_url("monitor_bench_poller")
    manage(database_url, "migrate", "--noinput")
    setup_django(database_url)
    from projects.models import PollResult

    with TargetProcess() as target:
        create_projects(target, args.projects, args.interval, args.path)
        result = run_poller(database_url, args.duration, args.max_concurrent)
        requests = target.requests()
    rows = PollResult.objects.count()
    engine = "PostgreSQL" if database_url.startswith("postgres") else "SQLite (WAL)"
    table = markdown_table(
        [
            {
                "database": engine,
                "projects": args.projects,
                "interval": f"{args.interval} s",
                "run": f"{args.duration:.0f} s",
                "polls": result["polls"],
                "polls/s": f"{result['polls'] / args.duration:.0f}",
                "target got": requests,
                "rows written": rows,
                "skipped ticks": result["skipped"],
                "lag p50": f"{result['p50']:.0f} ms",
                "lag p99": f"{result['p99']:.0f} ms",
                "CPU": f"{result['cpu_percent']:.0f} %",
                "peak RSS": f"{result['peak_rss_mb']:.0f} MB",
            }
        ]
    )
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}\n")
    print(table)
    lost = requests - rows
    print(f"\nresults lost: {lost}; missed (skipped) polls: {result['skipped']}")


if __name__ == "__main__":
    main()
