"""Benchmark: the writer's cost per poll with and without the rollups'
response-time histograms (issue #45; projects/latency/histogram.py).

    .venv/bin/python bench/bench_rollup_histograms.py            # SQLite and PG
    .venv/bin/python bench/bench_rollup_histograms.py --quick    # a smoke run

On each database (made and dropped here, each in a process of its own),
--projects projects are saved window after window in batches of 500
through DatabaseResultStore, in alternating rounds after a warm-up: once
as the writer does now (the histogram added in SQL), once with the
rollup step as it was before (no histogram column written: the same
upsert without it). Response times vary (log-normal), so a batch meets
new buckets as in life. Reported per poll: the CPU of this process plus
its PostgreSQL server process, and wall time; and after/before. The
issue's target: at most 1.15.

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
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
    parser.add_argument("--rounds", type=int, default=21)
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

    projects = Project.objects.bulk_create(
        Project(name=f"bench {i}", url=f"http://127.0.0.1:9/{i}", interval=60)
        for i in range(args.projects)
    )
    ids = [p.pk for p in projects]
    rng = random.Random(1)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with_histograms = results._add_to_rollups
    fields = tuple(f for f in results.ROLLUP_FIELDS if f != "histogram")

    def without_histograms(cursor, polls, in_maintenance):
        rows = results._rollup_rows(polls, in_maintenance, as_text=True)
        upsert_rows(
            cursor,
            HourlyRollup,
            fields,
            [row[:-1] for row in rows],
            conflict=("project", "hour"),
            updates=results.ROLLUP_ADDITIONS,
        )

    costs = {"before": _Cost(), "after": _Cost()}
    store = DatabaseResultStore()
    window = 0
    for round_ in range(args.rounds + 1):
        for name, step in (("before", without_histograms), ("after", with_histograms)):
            results._add_to_rollups = step
            at = t0 + timedelta(minutes=window)
            window += 1
            batch = [
                Outcome(
                    project_id=pk,
                    up=True,
                    started_at=at,
                    due_at=at,
                    status_code=200,
                    response_time_ms=int(rng.lognormvariate(5, 0.8)),
                )
                for pk in ids
            ]
            began = _Sample.now(connection)
            for start in range(0, len(batch), BATCH):
                store.save(batch[start : start + BATCH])
            if round_:  # the first round warms up
                costs[name].add(began, _Sample.now(connection), len(batch))
    results._add_to_rollups = with_histograms
    before, after = costs["before"].summary(), costs["after"].summary()
    return {
        "projects": args.projects,
        "rounds": args.rounds,
        "before": before,
        "after": after,
        "cpu_ratio": round(after["cpu_us_per_poll"] / before["cpu_us_per_poll"], 3),
        "wall_ratio": round(after["wall_us_per_poll"] / before["wall_us_per_poll"], 3),
    }


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
