"""Benchmark: flows of 3 steps beside single-request projects in one
runpoller (issue #44: 10,000 flows at 60 s, 1,500 requests/s, beside
100,000 single-request projects; 0 missed windows, lag p99 < 1 s, CPU per
step near that of a single-request poll).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python bench/bench_flows.py --flows 10000 --singles 100000 \
        --interval 60 --duration 300 --max-concurrent 2000

Creates a fresh database (PostgreSQL when DATABASE_URL points there, else
a temporary SQLite file), the flows (POST, capture the status, GET with
it in the URL, GET) and the single-request projects against a local
target process, runs `manage.py runpoller` through the capacity harness
and prints a markdown table: polls and requests per second, skipped
ticks (missed windows), lag p50/p99, CPU, and CPU per request.
BENCH_DB_SUFFIX names the database (monitor_bench_flows_<suffix>), and
BENCH_PORTS ("27000-27999") the ports taken, on a shared machine. Run it
once with --flows 0 for the single-request baseline of the last column.
"""

from __future__ import annotations

import argparse
import os
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

STEPS = (
    ("log in", "POST", "/ok?u={n}", {"code": "status"}),
    ("orders", "GET", "/ok?code={{{{code}}}}&u={n}", {}),
    ("order", "GET", "/ok?order=1&u={n}", {}),
)


def create_projects(target: TargetProcess, flows: int, singles: int, interval: int):
    from projects.models import FlowStep, Project

    common = {"interval": interval, "interval_unit": "seconds", "timeout_seconds": 10}
    made = Project.objects.bulk_create(
        (
            Project(name=f"flow {n}", kind=Project.Kind.FLOW, **common)
            for n in range(flows)
        ),
        batch_size=5000,
    )
    FlowStep.objects.bulk_create(
        (
            FlowStep(
                project=project,
                position=position,
                name=name,
                method=method,
                url=target.url(path.format(n=n)),
                capture=capture,
            )
            for n, project in enumerate(made)
            for position, (name, method, path, capture) in enumerate(STEPS, start=1)
        ),
        batch_size=5000,
    )
    Project.objects.bulk_create(
        (
            Project(name=f"single {n}", url=target.url(f"/ok?s={n}"), **common)
            for n in range(singles)
        ),
        batch_size=5000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=100)
    parser.add_argument("--singles", type=int, default=100)
    parser.add_argument("--interval", type=int, default=10, help="seconds")
    parser.add_argument("--duration", type=float, default=30, help="seconds")
    parser.add_argument("--warmup", type=float, default=0, help="seconds")
    parser.add_argument("--max-concurrent", type=int, default=100)
    args = parser.parse_args()

    suffix = os.environ.get("BENCH_DB_SUFFIX", "")
    database_url = fresh_database_url(f"monitor_bench_flows{suffix and '_'}{suffix}")
    manage(database_url, "migrate", "--noinput")
    setup_django(database_url)
    from projects.models import PollResult

    projects = args.flows + args.singles
    with TargetProcess() as target:
        create_projects(target, args.flows, args.singles, args.interval)
        before = target.requests()
        run = PollerRun(
            database_url,
            projects=projects,
            max_concurrent=args.max_concurrent,
            meters={"requests": target.requests},
        )
        report = run.run(warmup=args.warmup, measure=args.duration)
        requests = target.requests() - before
    if report.exit_code != 0 or not report.summary:
        raise SystemExit(f"runpoller failed ({report.exit_code}): {report.log_tail}")
    p50, p99, _ = report.lag_ms()
    flow_rows = PollResult.objects.filter(steps__isnull=False)
    failed_flows = flow_rows.filter(status="down").count()
    requests_per_s = report.meter_rates["requests"]
    engine = "PostgreSQL" if database_url.startswith("postgres") else "SQLite (WAL)"
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}\n")
    print(
        markdown_table(
            [
                {
                    "database": engine,
                    "flows": args.flows,
                    "single": args.singles,
                    "interval": f"{args.interval} s",
                    "run": f"{report.window_s:.0f} s",
                    "requests/s": f"{requests_per_s:.0f}",
                    "flow polls stored": flow_rows.count(),
                    "flows failed": failed_flows,
                    "skipped ticks": report.summary.get("skipped_ticks"),
                    "lag p50": f"{p50 or 0:.0f} ms",
                    "lag p99": f"{p99 or 0:.0f} ms",
                    "lag p99, steady": f"{report.steady_lag_p99_ms() or 0:.0f} ms",
                    "CPU": f"{report.cpu_percent:.0f} %",
                    "CPU per request": (
                        f"{report.cpu_percent * 10_000 / requests_per_s:.0f} µs"
                        if requests_per_s
                        else "-"
                    ),
                }
            ]
        )
    )
    print(f"\nrequests served in all: {requests}")


if __name__ == "__main__":
    main()
