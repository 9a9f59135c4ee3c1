"""Benchmark: regions (issue #31, docs/regions.md).

    BENCH_DB_SUFFIX=regions .venv/bin/python bench/bench_regions.py
    .venv/bin/python bench/bench_regions.py --part writer   # SQLite and PG

1. writer, on SQLite and on PostgreSQL in the same run (each a database
   of its own, made and dropped here, and a process of its own): the
   result writer's cost per poll for one region against three. The same
   --writer-projects are saved in batches of 500 through
   DatabaseResultStore, in alternating rounds after a warm-up: one window
   from the default region alone (the single-region path, as before
   regions), then the same window from three live regions (the region
   step: per-region views and quorum). Reported per poll: the CPU of the
   writer's process plus its PostgreSQL server process (the cost; wall
   time on a shared machine mostly measures the neighbours), each part,
   and wall time; and three regions' cost against one's. The target:
   within 20 %. Writes a run file in docs/benchmarks/ (not with --quick).
2. pollers, on PostgreSQL: three runpoller processes on this machine, one
   per region, sending from 127.0.0.2, .3 and .4 (POLLER_SOURCE_ADDRESS)
   to nginx on 127.0.0.1, each region polling every project (default
   30,000 at 60 s: 1,500 polls/s in all), each measured as
   bench/poller_run.py measures one (its status endpoint: polls/s,
   skipped ticks, lag; its process tree's CPU) after --warmup seconds from
   the moment it has scheduled every project, for --measure seconds. Then,
   from the stored results, per region: of the windows due while all three
   were measured (and at least an interval before the first was stopped),
   how many were stored, and where each one not stored lies: between two
   stored windows of its project (missed), before the project's first or
   after its last in that range, or in a project with none. Writes a run
   file in docs/benchmarks/ (not with --quick). Needs a quiet machine.

    --quick               1,000 projects, 20 s windows, short runs
    --part writer|pollers one part only
    --projects N --interval S --warmup S --measure S   (pollers)
    --writer-projects N --writer-rounds N              (writer)

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server,
BENCH_DB_SUFFIX names the databases (monitor_bench_regions_<suffix>).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from harness import (
    ROOT,
    BackendCpu,
    ProcessSample,
    cpu_model,
    database_versions,
    django_env,
    drop_database,
    fresh_database_url,
    git_head,
    machine,
    manage,
    markdown_table,
    process_cpu_seconds,
    raise_open_files_limit,
    relative_command,
    setup_django,
)
from poller_run import PollerRun
from run_logs import publish_run

REGIONS = {"eu": "127.0.0.2", "us": "127.0.0.3", "ap": "127.0.0.4"}
BATCH = 500


def main() -> None:
    args = parse_args()
    if args.writer_child:
        print(json.dumps(writer_child(args)))
        return
    raise_open_files_limit()
    server = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432")
    results = {}
    if args.part in ("writer", "all"):
        results["writer"] = {
            name: measure_writer(args, name, server) for name in WRITER_DATABASES
        }
    if args.part in ("pollers", "all"):
        results["pollers"] = measure_pollers_on(args, server)
    print(json.dumps(results, indent=2))
    if "writer" in results and not args.quick:
        report = writer_report(args, results["writer"], server)
        print(report)
        print(f"Published: {publish_run('regions-writer', report)}")
    if "pollers" in results:
        report = pollers_report(args, results["pollers"], server)
        print(report)
        if not args.quick:
            print(f"Published: {publish_run('regions-pollers', report)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["writer", "pollers", "all"], default="all")
    parser.add_argument("--projects", type=int, default=30_000)
    parser.add_argument("--writer-projects", type=int, default=5_000)
    parser.add_argument("--interval", type=int, default=60)
    parser.add_argument("--warmup", type=float, default=90)
    parser.add_argument("--measure", type=float, default=300)
    # 31 windows a minute apart: a settled view's row is written again
    # every 31st (REFRESH_SECONDS), once here, as in a steady run.
    parser.add_argument("--writer-rounds", type=int, default=31)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--writer-child", help=argparse.SUPPRESS)  # a database URL
    args = parser.parse_args()
    if args.quick:
        args.projects, args.interval = 1_000, 20
        args.warmup, args.measure = 30, 60
        args.writer_projects, args.writer_rounds = 1_000, 3
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


# The writer part runs once per database, each in a process of its own
# (Django is set up once per process).
WRITER_DATABASES = ("sqlite", "postgresql")


def measure_writer(args, database: str, server: str) -> dict:
    """The writer part on one database, in a child process."""
    base = f"{server}/postgres" if database == "postgresql" else "sqlite:///"
    url = fresh_database_url(f"monitor_bench_regions_{_suffix()}", base=base)
    try:
        manage(url, "migrate", "--no-input")
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--writer-child",
                url,
                "--writer-projects",
                str(args.writer_projects),
                "--writer-rounds",
                str(args.writer_rounds),
                "--interval",
                str(args.interval),
            ],
            cwd=ROOT,
            env=django_env(url),
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        drop_database(url)


def writer_child(args) -> dict:
    """Saving the same projects' windows from one region (the single-region
    path, no other region live), then from three live regions, in
    alternating rounds after one round of each to warm up: the machine's
    drift falls on both alike. The cost of a poll is the CPU of this
    process (which, on SQLite, is the database too) and, on PostgreSQL,
    of its server process, read from /proc: wall time on a shared machine
    says more about the neighbours."""
    setup_django(args.writer_child)
    from django.utils import timezone

    from polling.engine.types import Outcome
    from polling.store import DatabaseResultStore
    from projects.models import DEFAULT_REGION_ID, Region

    ids = make_projects(args.writer_projects, lambda i: f"http://127.0.0.1:9/{i}")
    regions = [Region.objects.create(name=n) for n in REGIONS]
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    totals = {"one_region": _Cost(), "three_regions": _Cost()}

    def save_window(stores: list, window: int, cost: _Cost | None) -> None:
        at = t0 + timedelta(seconds=args.interval * window)
        batch = [
            Outcome(
                project_id=pk,
                up=True,
                started_at=at,
                due_at=at,
                status_code=200,
                response_time_ms=20,
            )
            for pk in ids
        ]
        began = _Sample.now()
        for store in stores:
            for start in range(0, len(batch), BATCH):
                store.save(batch[start : start + BATCH])
        if cost is not None:
            cost.add(began, _Sample.now(), len(batch) * len(stores))

    for window in range(args.writer_rounds + 1):
        cost = totals["one_region"] if window else None  # the first: warm-up
        Region.objects.update(last_seen_at=None)  # only the default region
        save_window([DatabaseResultStore(region_id=DEFAULT_REGION_ID)], window, cost)
        cost = totals["three_regions"] if window else None
        Region.objects.update(last_seen_at=timezone.now())
        stores = [DatabaseResultStore(region_id=r.pk) for r in regions]
        save_window(stores, window, cost)
    one, three = (totals[k].summary() for k in ("one_region", "three_regions"))
    return {
        "projects": args.writer_projects,
        "rounds": args.writer_rounds,
        "one_region": one,
        "three_regions": three,
        "cpu_ratio": round(three["cpu_us_per_poll"] / one["cpu_us_per_poll"], 2),
        "wall_ratio": round(three["wall_us_per_poll"] / one["wall_us_per_poll"], 2),
    }


@dataclass
class _Sample:
    wall: float
    client_cpu: float
    server_cpu: float

    @classmethod
    def now(cls) -> _Sample:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return cls(time.perf_counter(), usage.ru_utime + usage.ru_stime, _server_cpu())


def _server_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL server process (0 on
    SQLite, which runs in this one)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    return process_cpu_seconds(pid)


@dataclass
class _Cost:
    polls: int = 0
    wall: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0

    def add(self, began: _Sample, ended: _Sample, polls: int) -> None:
        self.polls += polls
        self.wall += ended.wall - began.wall
        self.client_cpu += ended.client_cpu - began.client_cpu
        self.server_cpu += ended.server_cpu - began.server_cpu

    def summary(self) -> dict:
        def per_poll(seconds: float) -> float:
            return round(seconds / self.polls * 1e6, 1)

        return {
            "polls": self.polls,
            "cpu_us_per_poll": per_poll(self.client_cpu + self.server_cpu),
            "client_cpu_us_per_poll": per_poll(self.client_cpu),
            "server_cpu_us_per_poll": per_poll(self.server_cpu),
            "wall_us_per_poll": per_poll(self.wall),
        }


def writer_report(args, runs: dict, server: str) -> str:
    rows = []
    for database, run in runs.items():
        for key, label in (("one_region", "1 region"), ("three_regions", "3")):
            cost = run[key]
            rows.append(
                {
                    "database": database,
                    "regions": label,
                    "polls": f"{cost['polls']:,}",
                    "CPU µs/poll (writer + server)": cost["cpu_us_per_poll"],
                    "writer CPU": cost["client_cpu_us_per_poll"],
                    "server CPU": cost["server_cpu_us_per_poll"],
                    "wall µs/poll": cost["wall_us_per_poll"],
                    "3 / 1 (CPU, wall)": ""
                    if key == "one_region"
                    else f"{run['cpu_ratio']} / {run['wall_ratio']}",
                }
            )
    when = datetime.now(UTC)
    return "\n".join(
        [
            f"# Regions: the writer's cost per poll, {when:%Y-%m-%d %H:%M} UTC",
            "",
            f"Commit {git_head()}; {machine()}, {cpu_model()}; "
            f"{database_versions(['sqlite:///', f'{server}/postgres'])}.",
            "",
            f"`{relative_command(sys.argv)}`: {args.writer_projects:,} "
            f"projects saved through DatabaseResultStore in batches of {BATCH}, "
            f"{args.writer_rounds} rounds after a warm-up; each round one "
            "window from the default region alone (the single-region path), "
            "then the same window from three live regions. CPU is the "
            "writer's process plus, on PostgreSQL, its server process.",
            "",
            markdown_table(rows),
            "",
        ]
    )


def _suffix() -> str:
    return os.environ.get("BENCH_DB_SUFFIX", "local")


def measure_pollers_on(args, server: str) -> dict:
    url = fresh_database_url(
        f"monitor_bench_regions_{_suffix()}", base=f"{server}/postgres"
    )
    try:
        manage(url, "migrate", "--no-input")
        setup_django(url)
        return measure_pollers(args, url)
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(url)


def measure_pollers(args, url: str) -> dict:
    """Three pollers at once, one per region, each measured as
    bench/poller_run.py measures one (its status endpoint, its process
    tree's CPU) in a thread of its own; then their windows counted from
    the stored polls."""
    from nginx import NginxTarget

    from django.db import connections

    from projects.models import Project

    with NginxTarget(workers=2) as nginx:
        # /ok answers 200, so every poll is up, as most are ("/" is 404).
        make_projects(args.projects, lambda i: nginx.url(f"/ok?p={i}"))
        Project.objects.update(interval=args.interval)
        connections.close_all()  # not held open for the whole run
        first = next(iter(REGIONS))
        runs = {
            name: PollerRun(
                url,
                projects=args.projects,
                max_concurrent=200,
                env={
                    "POLLER_REGION": name,
                    "POLLER_SOURCE_ADDRESS": f"host!{source}",
                    "LOG_LEVEL": "WARNING",
                },
                # The target and the database serve all three pollers:
                # read once, over the first region's window.
                meters=_shared_meters(nginx, url) if name == first else None,
            )
            for name, source in REGIONS.items()
        }
        with ThreadPoolExecutor(len(runs)) as pool:
            running = {
                name: pool.submit(run.run, warmup=args.warmup, measure=args.measure)
                for name, run in runs.items()
            }
            reports = {name: future.result() for name, future in running.items()}
    for name, report in reports.items():
        if report.exit_code != 0:
            print("\n".join(report.log_tail), file=sys.stderr)
            raise RuntimeError(f"the poller of {name} exited with {report.exit_code}")
    return {
        "projects": args.projects,
        "interval_s": args.interval,
        "polls_per_s_wanted": round(len(REGIONS) * args.projects / args.interval),
        "shared": reports[first].meter_rates,
        "per_region": {
            name: {
                **count_windows(
                    name, *_counted_range(report, args.interval), args.interval
                ),
                "polls_per_s": _per_s(report, "polls_total"),
                "results_written_per_s": _per_s(report, "results_written"),
                "skipped_ticks": report.window_counts.get("skipped_ticks"),
                "lag_p99_ms": report.lag_ms()[1],
                "cpu_percent": round(report.cpu_percent, 1),
                "peak_rss_mb": round(report.peak_rss_mb),
                "machine_cpu_percent": round(report.machine_cpu_percent, 1),
            }
            for name, report in reports.items()
        },
    }


def _shared_meters(nginx, url: str) -> dict:
    nginx_cpu = ProcessSample(nginx.process.pid, descendants=True)

    def nginx_seconds() -> float:
        nginx_cpu.read()
        return nginx_cpu.cpu_seconds

    return {"nginx_cpu": nginx_seconds, "postgres_cpu": BackendCpu(url)}


def _per_s(report, counter: str) -> float | None:
    count = report.window_counts.get(counter)
    return None if count is None else round(count / report.window_s, 1)


def _counted_range(report, interval: int) -> tuple[datetime, datetime]:
    """The windows of one poller counted: due while it was measured, and
    at least an interval before it was stopped, so that each had its whole
    interval to be polled (a later one is not missed yet: it may still
    be). A whole number of intervals, so that each project has the same
    number of windows in it."""
    since = report.stopped_at - report.window_s
    windows = int((report.stopped_at - interval - since) // interval)
    if windows < 1:
        raise ValueError(f"--measure must be at least two intervals ({interval} s)")
    return (
        datetime.fromtimestamp(since, UTC),
        datetime.fromtimestamp(since + windows * interval, UTC),
    )


def count_windows(region: str, since: datetime, until: datetime, interval: int):
    """Of a region's windows due in [since, until), a whole number of
    intervals: how many were stored, and where the others are. A project's
    windows are a fixed grid (its first poll plus whole intervals), so
    each of its windows not stored is one of: missed between two stored
    ones (a gap of more than an interval), before its first stored one in
    the range, after its last, or in a project with none stored in the
    range."""
    from django.db import connection

    from projects.models import Region

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*), coalesce(sum(stored), 0), coalesce(sum(missed), 0),
                   coalesce(sum(floor(extract(epoch FROM first - %(since)s)
                       / %(interval)s)), 0),
                   coalesce(sum(ceil(extract(epoch FROM %(until)s - last)
                       / %(interval)s) - 1), 0)
            FROM (
                SELECT project_id, count(*) AS stored,
                       min(polled_at) AS first, max(polled_at) AS last,
                       sum(greatest(round(extract(epoch FROM gap) / %(interval)s)
                           - 1, 0)) AS missed
                FROM (
                    SELECT project_id, polled_at,
                           polled_at - lag(polled_at) OVER (
                               PARTITION BY project_id ORDER BY polled_at) AS gap
                    FROM projects_pollresult
                    WHERE region_id = %(region)s
                      AND polled_at >= %(since)s AND polled_at < %(until)s
                ) windows
                GROUP BY project_id
            ) projects
            """,
            {
                "region": Region.objects.get(name=region).pk,
                "interval": interval,
                "since": since,
                "until": until,
            },
        )
        projects, stored, missed, before, after = cursor.fetchone()
    return {
        "since": since.isoformat(),
        "until": until.isoformat(),
        "windows_per_project": round((until - since).total_seconds() / interval),
        "projects_seen": projects,
        "stored": int(stored),
        "missed": int(missed),
        "before_first": int(before),
        "after_last": int(after),
    }


def pollers_report(args, run: dict, server: str) -> str:
    rows = []
    for name, region in run["per_region"].items():
        windows = region["windows_per_project"]
        unseen = args.projects - region["projects_seen"]
        rows.append(
            {
                "region": name,
                "polls/s": region["polls_per_s"],
                "windows due": f"{args.projects * windows:,}",
                "from (UTC)": region["since"][11:19],
                "to": region["until"][11:19],
                "stored": f"{region['stored']:,}",
                "missed (between two stored)": f"{region['missed']:,}",
                "before a project's first stored": f"{region['before_first']:,}",
                "after its last": f"{region['after_last']:,}",
                "in projects with none": f"{unseen * windows:,}",
                "skipped ticks": region["skipped_ticks"],
                "lag p99 (worst sample)": _ms(region["lag_p99_ms"]),
                "poller CPU (of a core)": f"{region['cpu_percent']} %",
                "peak RSS": f"{region['peak_rss_mb']} MB",
            }
        )
    shared = run["shared"]
    machine_cpu = next(iter(run["per_region"].values()))["machine_cpu_percent"]
    when = datetime.now(UTC)
    return "\n".join(
        [
            f"# Regions: three pollers on one machine, {when:%Y-%m-%d %H:%M} UTC",
            "",
            f"Commit {git_head()}; {machine()}, {cpu_model()}; "
            f"{database_versions([f'{server}/postgres'])}.",
            "",
            f"`{relative_command(sys.argv)}`: {args.projects:,} projects every "
            f"{args.interval} s, polled by one runpoller per region "
            f"({', '.join(f'{n} from {a}' for n, a in REGIONS.items())}; "
            f"{run['polls_per_s_wanted']:,} polls/s wanted in all) against "
            "nginx on 127.0.0.1 (200 to every poll). Each poller: "
            f"{args.warmup:g} s of warm-up once it has scheduled every project, "
            f"then {args.measure:g} s measured (polls/s, skipped ticks, CPU "
            "of its process tree; lag is the worst p99 of its status samples).",
            "",
            "Windows counted from the stored polls, per region: those due "
            "while its poller was measured and at least one interval before "
            "it was stopped (so that each had its whole interval to be "
            "polled), a whole number of intervals: the same number of windows "
            "for every project. A project's windows are a fixed grid; each "
            "one due and not stored is counted once, by where it lies: "
            "between two stored windows of the project (missed), before its "
            "first stored window in the range (its polls began late), after "
            "its last (they stopped early), or in a project with no window "
            "stored in the range.",
            "",
            markdown_table(rows),
            "",
            f"Over {next(iter(REGIONS))}'s measured window: nginx "
            f"{_percent(shared.get('nginx_cpu'))}, PostgreSQL's backends "
            f"{_percent(shared.get('postgres_cpu'))} of a core; the whole "
            f"machine {machine_cpu} % of its {100 * os.cpu_count()} %.",
            "",
        ]
    )


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f} ms"


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{100 * rate:.0f} %"


if __name__ == "__main__":
    main()
