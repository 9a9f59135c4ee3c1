"""The database side of bench_storage.py, one step per process.

    python bench/storage_db.py bytes --layout before|after --projects N --polls N
    python bench/storage_db.py seed --projects N --rows N
    python bench/storage_db.py write --rate R
    python bench/storage_db.py prune

DATABASE_URL names a fresh database. Each step prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import signal
import threading
import time
from datetime import UTC, datetime, timedelta

from harness import setup_django

# The PollResult layout before e7fe015 (the smaller PollResult).
BEFORE = ("projects", "0010_certificate_warnings")
POLL_INTERVAL = timedelta(seconds=60)
FIRST_POLL = datetime(2026, 1, 1, tzinfo=UTC)
REASONS = [
    "timed out after 10 s",
    "connection refused",
    "DNS lookup failed for api.example.com",
    "TLS certificate verify failed: certificate has expired",
]


def poll(rng: random.Random, project_id: int, at: datetime):
    """One poll as the probe reports it: 96 % up with a status code and a
    response time; 2 % down with a status; 2 % down with a short reason and
    no response. Polls that got a response have their phases, four in five
    on a new https connection (DNS, connect and TLS timed), the rest on a
    reused one (first byte only)."""
    from polling.engine.types import Outcome

    draw = rng.random()
    ms = min(int(rng.lognormvariate(5.0, 0.6)), 10_000)  # median ~150 ms
    phases = {"first_byte_ms": ms // 2}
    if rng.random() < 0.8:
        phases |= {"dns_ms": ms // 10, "connect_ms": ms // 10, "tls_ms": ms // 5}
    if draw < 0.96:
        return Outcome(project_id, True, at, at, 200, ms, **phases)
    if draw < 0.98:
        code = rng.choice([500, 502, 503, 404])
        return Outcome(
            project_id,
            False,
            at,
            at,
            code,
            ms,
            f"expected 200-399, got {code}",
            **phases,
        )
    return Outcome(project_id, False, at, at, error=rng.choice(REASONS))


def poll_columns() -> list[str]:
    """The PollResult columns this database has, of those a poll fills."""
    from django.db import connection

    from polling.store import RESULT_FIELDS
    from projects.models import PollResult

    wanted = [PollResult._meta.get_field(name).column for name in RESULT_FIELDS]
    wanted.append("status")  # before 0017 the status was text, not `up`
    with connection.cursor() as cursor:
        have = {
            c.name
            for c in connection.introspection.get_table_description(
                cursor, PollResult._meta.db_table
            )
        }
    return [c for c in wanted if c in have]


def row(outcome, columns: list[str]) -> tuple:
    from django.db import connection

    values = {
        "project_id": outcome.project_id,
        "polled_at": connection.ops.adapt_datetimefield_value(outcome.started_at),
        "up": outcome.up,
        "status": "up" if outcome.up else "down",
        "status_code": outcome.status_code,
        "response_time_ms": outcome.response_time_ms,
        "error_message": outcome.error,
        "dns_ms": outcome.dns_ms,
        "connect_ms": outcome.connect_ms,
        "tls_ms": outcome.tls_ms,
        "first_byte_ms": outcome.first_byte_ms,
    }
    # Columns a poll of another kind fills (pings' round trips): null here.
    return tuple(values.get(c) for c in columns)


def migrate(layout: str) -> None:
    from django.core.management import call_command

    if layout == "before":
        call_command("migrate", *BEFORE, verbosity=0)
    else:
        call_command("migrate", verbosity=0)


def add_projects(count: int) -> list[int]:
    """Projects made through the migration state's model, so they fit the
    layout the database is at."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    loader = MigrationExecutor(connection).loader
    leaf = max(key for key in loader.applied_migrations if key[0] == "projects")
    project = loader.project_state(leaf).apps.get_model("projects", "Project")
    project.objects.bulk_create(
        project(name=f"bench {i}", url=f"https://example.com/{i}") for i in range(count)
    )
    return list(project.objects.order_by("pk").values_list("pk", flat=True))


def insert_polls(ticks, columns: list[str]) -> int:
    """Insert each tick's polls in a transaction of its own, in time order,
    as the writer does. On PostgreSQL by COPY, the quickest way in: the
    rows and pages come out as the writer's INSERT … SELECT makes them."""
    from django.db import connection, transaction

    from projects.models import PollResult

    table = connection.ops.quote_name(PollResult._meta.db_table)
    names = ", ".join(columns)
    rows = 0
    for tick in ticks:
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                    for values in tick:
                        copy.write_row(values)
            else:
                marks = ", ".join(["%s"] * len(columns))
                cursor.executemany(
                    f"INSERT INTO {table} ({names}) VALUES ({marks})", tick
                )
        rows += len(tick)
    return rows


def ticks(ids: list[int], polls: int, start: datetime, columns: list[str]):
    """Every project polled `polls` times a minute apart, spread over the
    minute as the scheduler spreads them."""
    rng = random.Random(10)
    spread = POLL_INTERVAL / len(ids)
    for k in range(polls):
        at = start + k * POLL_INTERVAL
        yield [
            row(poll(rng, pid, at + i * spread), columns) for i, pid in enumerate(ids)
        ]


def bytes_per_poll(args: argparse.Namespace) -> dict:
    from projects.housekeeping.retention import prune_results
    from projects.housekeeping.storage import table_storage, vacuum
    from projects.models import DailyRollup, HourlyRollup, PollResult

    migrate(args.layout)
    ids = add_projects(args.projects)
    columns = poll_columns()
    began = time.monotonic()
    # An install past its first retention period writes each project's
    # polls where its neighbour's oldest ones were pruned, which changes
    # how B-tree pages split (see PackedIndex). So: half as many polls
    # first (they take about as many pages as the rest will), prune all
    # but their last tenth, VACUUM as autovacuum would, then the polls.
    first = args.polls // 2
    insert_polls(ticks(ids, first, FIRST_POLL, columns), columns)
    middle = FIRST_POLL + first * POLL_INTERVAL
    keep_from = middle - first // 10 * POLL_INTERVAL
    prune_results(now=keep_from + timedelta(days=30), days=30)
    settle(PollResult)
    insert_polls(ticks(ids, args.polls, middle, columns), columns)
    filled = time.monotonic() - began
    models = [PollResult]
    if args.layout == "after":
        add_rollups(ids, middle + args.polls * POLL_INTERVAL)
        models += [HourlyRollup, DailyRollup]
    sizes = {}
    for model in models:
        vacuum(model)
        storage = table_storage(model)
        sizes[model.__name__] = {
            "rows": storage.rows,
            "relations": [
                [r.name, r.kind, r.bytes, storage.per_row(r)] for r in storage.relations
            ],
            "bytes_per_row": storage.bytes_per_row,
        }
    return {"fill_s": filled, "columns": columns, "sizes": sizes}


def settle(model) -> None:
    """VACUUM twice with a transaction between, as autovacuum does over
    time: the first frees the pruned rows' space and deletes the emptied
    index pages, which PostgreSQL hands back for reuse only at a VACUUM
    after newer transactions."""
    from django.db import connection

    from projects.housekeeping.storage import vacuum

    vacuum(model)
    for _ in range(2):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_current_xact_id()")
        vacuum(model)


def add_rollups(ids: list[int], last_poll: datetime) -> None:
    """Hourly rollups summed from the polls, and daily ones a day per
    project for 60 days, in the order compaction writes them."""
    from django.db import connection

    from projects.housekeeping.compaction import compact_rollups
    from projects.models import DailyRollup, HourlyRollup, PollResult

    hourly, polls_table = (
        connection.ops.quote_name(m._meta.db_table) for m in (HourlyRollup, PollResult)
    )
    hour = "date_trunc('hour', polled_at)"
    if connection.vendor != "postgresql":
        hour = "strftime('%Y-%m-%d %H:00:00', polled_at)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {hourly} (project_id, hour, polls, failures, responses,
                                  response_time_sum_ms, response_time_max_ms,
                                  maintenance_polls, maintenance_failures)
            SELECT project_id, {hour}, count(*),
                   sum(CASE WHEN up THEN 0 ELSE 1 END),
                   count(response_time_ms), coalesce(sum(response_time_ms), 0),
                   max(response_time_ms), 0, 0
            FROM {polls_table} GROUP BY 1, 2 ORDER BY 2, 1
            """
        )
    compact_rollups(now=last_poll + timedelta(days=1))
    first = FIRST_POLL.date()
    DailyRollup.objects.bulk_create(
        DailyRollup(
            project_id=pid,
            day=first - timedelta(days=d),
            polls=1440,
            failures=d % 3,
            responses=1440,
            response_time_sum_ms=1440 * 150,
            response_time_max_ms=900,
        )
        for d in range(60, 0, -1)
        for pid in ids
    )


def seed(args: argparse.Namespace) -> dict:
    """Polls past retention (40 days old and older), then VACUUM, as an
    install looks before its first pruning."""
    from projects.housekeeping.storage import vacuum
    from projects.models import PollResult

    migrate("after")
    ids = add_projects(args.projects)
    columns = poll_columns()
    polls = args.rows // len(ids)
    start = datetime.now(UTC) - timedelta(days=40) - polls * POLL_INTERVAL
    began = time.monotonic()
    rows = insert_polls(ticks(ids, polls, start, columns), columns)
    vacuum(PollResult)
    return {"rows": rows, "seed_s": time.monotonic() - began}


class TimedStore:
    """The poller's result store, noting when each save began and how long
    it took (Unix time, seconds)."""

    def __init__(self, store) -> None:
        self.store = store
        self.saves: list[tuple[float, float, int]] = []

    def save(self, outcomes) -> int:
        began, clock = time.time(), time.perf_counter()
        saved = self.store.save(outcomes)
        self.saves.append((began, time.perf_counter() - clock, len(outcomes)))
        return saved

    def close(self) -> None:
        self.store.close()


def write(args: argparse.Namespace) -> dict:
    """The engine's ResultWriter saving `rate` polls/s (DatabaseResultStore,
    the default batch settings) until SIGTERM."""
    from polling.engine.config import PollerConfig
    from polling.engine.writer import ResultWriter
    from polling.store import DatabaseResultStore
    from projects.models import Project

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    ids = list(Project.objects.order_by("pk").values_list("pk", flat=True))
    results: queue.Queue = queue.Queue()
    store = TimedStore(DatabaseResultStore())
    config = PollerConfig()
    writer = ResultWriter(
        results,
        store,
        batch_size=config.write_batch_size,
        batch_seconds=config.write_batch_seconds,
    )
    writer.start()
    rng, step, n = random.Random(500), 0.1, 0
    next_at = time.monotonic()
    while not stop.wait(max(next_at - time.monotonic(), 0)):
        now = datetime.now(UTC)
        for _ in range(int(args.rate * step)):
            results.put(poll(rng, ids[n % len(ids)], now))
            n += 1
        next_at += step
    writer.stop()
    return {"polls": n, "written": writer.written, "saves": store.saves}


def prune(args: argparse.Namespace) -> dict:
    from projects.housekeeping.retention import prune_results

    began, clock = time.time(), time.perf_counter()
    pruned = prune_results()
    seconds = time.perf_counter() - clock
    return {
        "rows": pruned.rows,
        "chunks": pruned.chunks,
        "began": began,
        "seconds": seconds,
        "finished": pruned.finished,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    step = steps.add_parser("bytes", help="fill one layout and measure it")
    step.add_argument("--layout", choices=["before", "after"], required=True)
    step.add_argument("--projects", type=int, required=True)
    step.add_argument("--polls", type=int, required=True, help="per project")
    step = steps.add_parser("seed", help="polls past retention")
    step.add_argument("--projects", type=int, required=True)
    step.add_argument("--rows", type=int, required=True)
    step = steps.add_parser("write", help="the result writer until SIGTERM")
    step.add_argument("--rate", type=float, required=True, help="polls/s")
    steps.add_parser("prune", help="prune_results once")
    args = parser.parse_args()
    setup_django(os.environ["DATABASE_URL"])
    run = {"bytes": bytes_per_poll, "seed": seed, "write": write, "prune": prune}
    print(json.dumps(run[args.step](args)))


if __name__ == "__main__":
    main()
