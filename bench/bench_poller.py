"""Benchmark: does one runpoller keep N projects on time?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python bench/bench_poller.py --projects 1000 --interval 10

Creates a fresh database (PostgreSQL when DATABASE_URL points there, else a
temporary SQLite file), N projects against a local target process, runs
`manage.py runpoller` for --duration seconds, stops it with SIGTERM and
prints a markdown table: polls made, the target's request count, rows
written, skipped ticks, scheduling lag (median of the sampled p50s, worst
sampled p99), CPU and peak memory of the poller process.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from harness import (
    TargetProcess,
    fresh_database_url,
    machine,
    manage,
    markdown_table,
    setup_django,
)
from poller_run import PollerRun


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


def run_poller(database_url: str, projects: int, args) -> dict:
    """Run the poller through the capacity harness's PollerRun, so both
    benchmarks measure runpoller the same way."""
    run = PollerRun(database_url, projects=projects, max_concurrent=args.max_concurrent)
    report = run.run(warmup=0, measure=args.duration)
    if report.exit_code != 0 or not report.summary:
        raise RuntimeError(f"runpoller failed ({report.exit_code}): {report.log_tail}")
    p50, p99, _ = report.lag_ms()
    return {
        "polls": report.summary["polls_total"],
        "skipped": report.summary["skipped_ticks"],
        "p50": p50 or 0.0,
        "p99": p99 or 0.0,
        "cpu_percent": report.cpu_percent,
        "peak_rss_mb": report.peak_rss_mb,
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
        result = run_poller(database_url, args.projects, args)
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
