"""Benchmark: the writer's cost per poll with and without the rollups'
response-time histograms (issue #45; projects/latency/histogram.py).

    .venv/bin/python bench/bench_rollup_histograms.py            # SQLite and PG
    .venv/bin/python bench/bench_rollup_histograms.py --quick    # a smoke run

On each database (made and dropped here, each in a process of its own),
two sets of --projects projects are saved window after window in batches
of 500 through DatabaseResultStore, in alternating rounds after a
warm-up: "after" as the writer does now (each poll's bucket code appended
to the hourly rollup's histogram, projects.models.fields.BucketCodesField),
"before" with the rollup step exactly as it was before histograms
(`_rollup_rows_before` below, copied from polling/store/results.py at
55cba0d^: no bucket worked out, no histogram column written, so its rows
keep the column's empty default). Each set has its own rollup rows, so
neither pays for the other's. Response times vary (log-normal), so a
batch meets new buckets as in life. Reported per poll: the CPU of this
process plus its PostgreSQL server process, and wall time, summed over
the rounds; the median of the rounds' CPU ratios, which a busy machine
sways less; and after/before. The issue's target: at most 1.15.

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from harness import (
    ROOT,
    drop_database,
    fresh_database_url,
    manage,
    process_cpu_seconds,
    setup_django,
)

BATCH = 500
HOUR = timedelta(hours=1)


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    pg = args.pg_url.rstrip("/")
    results = {}
    for name, base in (("sqlite", ""), ("postgresql", f"{pg}/postgres")):
        url = fresh_database_url("monitor_bench_histograms", base=base)
        try:
            manage(url, "migrate", "--noinput")
            command = [sys.executable, __file__, "--child", url]
            command += ["--projects", str(args.projects), "--rounds", str(args.rounds)]
            out = subprocess.run(
                command, cwd=ROOT, check=True, capture_output=True, text=True
            )
            results[name] = json.loads(out.stdout)
        finally:
            drop_database(url)
    print(json.dumps(results, indent=2))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=5_000)
    # A window a minute: the warm-up and 59 rounds are an hour's windows,
    # so the hourly rollups grow as they do in an hour.
    parser.add_argument("--rounds", type=int, default=59)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pg-url", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a database URL
    args = parser.parse_args()
    if args.quick:
        args.projects, args.rounds = 500, 3
    return args


def child(args) -> dict:
    setup_django(args.child)
    from django.db import connection

    from polling.engine.types import Outcome
    from polling.store import DatabaseResultStore, results
    from projects.incidents.batch_writes import upsert_rows
    from projects.models import HourlyRollup, Project

    ids = {
        name: [
            p.pk
            for p in Project.objects.bulk_create(
                Project(name=f"{name} {i}", url=f"http://127.0.0.1:9/{i}", interval=60)
                for i in range(args.projects)
            )
        ]
        for name in ("before", "after")
    }
    rng = random.Random(1)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with_histograms = results._add_to_rollups
    fields = tuple(f for f in results.ROLLUP_FIELDS if f != "histogram")
    additions = {k: v for k, v in results.ROLLUP_ADDITIONS.items() if k != "histogram"}

    def without_histograms(cursor, polls, in_maintenance):
        upsert_rows(
            cursor,
            HourlyRollup,
            fields,
            _rollup_rows_before(polls, in_maintenance),
            conflict=("project", "hour"),
            updates=additions,
        )

    costs = {"before": _Cost(), "after": _Cost()}
    ratios = []
    store = DatabaseResultStore()
    for round_ in range(args.rounds + 1):
        at = t0 + timedelta(minutes=round_)
        spent = {}
        for name, step in (("before", without_histograms), ("after", with_histograms)):
            results._add_to_rollups = step
            batch = [
                Outcome(
                    project_id=pk,
                    up=True,
                    started_at=at,
                    due_at=at,
                    status_code=200,
                    response_time_ms=int(rng.lognormvariate(5, 0.8)),
                )
                for pk in ids[name]
            ]
            began = _Sample.now(connection)
            for start in range(0, len(batch), BATCH):
                store.save(batch[start : start + BATCH])
            ended = _Sample.now(connection)
            spent[name] = ended.cpu - began.cpu
            if round_:  # the first round warms up
                costs[name].add(began, ended, len(batch))
        if round_:
            ratios.append(spent["after"] / spent["before"])
    results._add_to_rollups = with_histograms
    before, after = costs["before"].summary(), costs["after"].summary()
    return {
        "projects": args.projects,
        "rounds": args.rounds,
        "before": before,
        "after": after,
        "cpu_ratio": round(after["cpu_us_per_poll"] / before["cpu_us_per_poll"], 3),
        "wall_ratio": round(after["wall_us_per_poll"] / before["wall_us_per_poll"], 3),
        "median_round_cpu_ratio": round(statistics.median(ratios), 3),
    }


def _rollup_rows_before(polls, in_maintenance) -> list[tuple]:
    """polling/store/results.py's _rollup_rows as it was before
    histograms (55cba0d^), word for word: the writer "before"."""
    from projects.incidents.batch_writes import datetime_adapter

    sums: dict[tuple[int, datetime], list] = {}
    hour = next_hour = None
    for poll in polls:
        # A batch spans an hour or two: truncating each poll's time would
        # cost more than the rest of its sums.
        if next_hour is None or not hour <= poll.at < next_hour:
            hour = poll.at.replace(minute=0, second=0, microsecond=0)
            next_hour = hour + HOUR
        row = sums.get((poll.project_id, hour))
        if row is None:
            row = sums[poll.project_id, hour] = [0, 0, 0, 0, None, 0, 0]
        row[0] += 1
        row[1] += 0 if poll.up else 1
        if poll.response_time_ms is not None:
            row[2] += 1
            row[3] += poll.response_time_ms
            row[4] = max(row[4] or 0, poll.response_time_ms)
        if in_maintenance(poll):
            row[5] += 1
            row[6] += 0 if poll.up else 1
    adapt = datetime_adapter()
    # In key order, so concurrent writers meet the rows in the same order.
    return [
        (project_id, adapt(hour), *sums[project_id, hour])
        for project_id, hour in sorted(sums)
    ]


@dataclass
class _Sample:
    wall: float
    cpu: float

    @classmethod
    def now(cls, connection) -> _Sample:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        server = 0.0
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                server = process_cpu_seconds(cursor.fetchone()[0])
        return cls(time.perf_counter(), usage.ru_utime + usage.ru_stime + server)


@dataclass
class _Cost:
    polls: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    rounds: list = field(default_factory=list)

    def add(self, began: _Sample, ended: _Sample, polls: int) -> None:
        self.polls += polls
        self.wall += ended.wall - began.wall
        self.cpu += ended.cpu - began.cpu

    def summary(self) -> dict:
        return {
            "polls": self.polls,
            "cpu_us_per_poll": round(self.cpu / self.polls * 1e6, 1),
            "wall_us_per_poll": round(self.wall / self.polls * 1e6, 1),
        }


if __name__ == "__main__":
    main()
