"""Benchmark: dashboard render times on PostgreSQL with 10 million polls.

Creates its own database (monitor_bench_dashboard, dropped and re-created
unless --keep finds it already seeded), seeds 1,000 projects and about 10
million poll results over 30 days with set-based SQL, builds the hourly
rollups with rebuild_rollups(), then renders the overview and the project
page through the Django test client and prints a markdown table of median
and p95 times.

Run it from the repository root:

    .venv/bin/python bench/bench_dashboard.py              # seed, then time
    .venv/bin/python bench/bench_dashboard.py --keep       # reuse the seed
    .venv/bin/python bench/bench_dashboard.py --publish    # a file in docs/benchmarks/
    .venv/bin/python bench/bench_dashboard.py --drop       # remove the DB

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server.
Seeding takes a few minutes; timing takes under a minute.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from harness import markdown_table
from run_logs import publish_run

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "monitor_bench_dashboard"
SERVER_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432")
REQUESTS = 20
WARMUP = 3
DAYS = 30
PROJECTS = 1000

# (interval in seconds, how many projects): about 10 million polls in 30 days.
INTERVAL_MIX = [(10, 10), (30, 26), (60, 45), (300, 200), (600, 309), (3600, 410)]


def main() -> None:
    args = parse_args()
    if args.drop:
        drop_database()
        return
    seeded = args.keep and database_is_seeded()
    if not seeded:
        drop_database()
        create_database()
    setup_django()
    if seeded:
        migrate()
    else:
        seed()
    report = make_report(time_pages())
    print(report)
    if args.append:
        with Path(args.append).open("a") as file:
            file.write(f"\n{report}")
    if args.publish:
        print(f"Published: {publish_run('dashboard', report)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="reuse a seeded DB")
    parser.add_argument("--drop", action="store_true", help="drop the DB and stop")
    parser.add_argument("--append", metavar="FILE", help="append the report here")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="write the report as a new run log in docs/benchmarks/",
    )
    return parser.parse_args()


# Database lifecycle


def server_connection() -> psycopg.Connection:
    return psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True)


def drop_database() -> None:
    with server_connection() as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")


def create_database() -> None:
    with server_connection() as conn:
        conn.execute(f"CREATE DATABASE {DB_NAME}")


def database_is_seeded() -> bool:
    try:
        with psycopg.connect(f"{SERVER_URL}/{DB_NAME}") as conn:
            row = conn.execute("SELECT count(*) FROM projects_hourlyrollup").fetchone()
            return row[0] > 0
    except psycopg.Error:
        return False


def setup_django() -> None:
    os.environ["DATABASE_URL"] = f"{SERVER_URL}/{DB_NAME}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    # The test client sends Host: testserver.
    os.environ["ALLOWED_HOSTS"] = "testserver"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# Seeding


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed() -> None:
    migrate()
    step("projects", seed_projects)
    for day in range(DAYS):
        step(f"polls, day {day + 1}/{DAYS}", lambda day=day: seed_polls_for_day(day))
    step("vacuum analyze", lambda: run_sql("VACUUM ANALYZE"))
    step("rollups", seed_rollups)
    step("current state", seed_current_state)
    step("vacuum analyze", lambda: run_sql("VACUUM ANALYZE"))
    # Write the seed out now, not during the timed requests.
    step("checkpoint", lambda: run_sql("CHECKPOINT"))


def step(name: str, action) -> None:
    started = time.perf_counter()
    action()
    print(f"  {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)


def run_sql(sql: str, params: dict | None = None) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def seed_projects(first: int = 1, last: int = PROJECTS) -> None:
    cases = []
    start = 1
    for interval, count in INTERVAL_MIX:
        cases.append(f"WHEN i < {start + count} THEN {interval}")
        start += count
    # Every 50th project was added yesterday; every 97th is paused; every
    # 199th was never polled; every 101st has been down all month.
    run_sql(
        f"""
        INSERT INTO projects_project (
            name, url, method, headers, body, expected_status, interval,
            interval_unit, timeout_seconds, enabled, created_at, updated_at,
            last_status, consecutive_failures)
        SELECT format('service-%s', lpad(i::text, 4, '0')),
               format('https://svc%s.example.test/health', i),
               'GET', '{{}}', '', 200,
               CASE {" ".join(cases)} ELSE {INTERVAL_MIX[-1][0]} END,
               'seconds', 5, i % 97 <> 0,
               date_trunc('second', now()) - CASE WHEN i % 50 = 0 THEN interval '1 day'
                            ELSE interval '{DAYS} days' END,
               now(), '', 0
        FROM generate_series({first}, {last}) AS i
        """
    )


def seed_polls_for_day(day: int) -> None:
    # Each project polls on its own grid (origin + k * interval), so the
    # days join up; rows are inserted in time order as a poller would.
    run_sql(
        """
        INSERT INTO projects_pollresult (
            project_id, polled_at, up, status_code, response_time_ms,
            error_message)
        SELECT id, t,
               NOT down,
               CASE WHEN NOT down THEN 200 WHEN r < 0.5 THEN 503 END,
               CASE WHEN NOT down OR r < 0.5
                    THEN (90 + id %% 7 * 25 + r * 120
                          + 60 * sin(extract(epoch FROM t) / 9000.0))::int END,
               CASE WHEN NOT down THEN ''
                    WHEN r < 0.5 THEN 'expected 200, got 503'
                    ELSE 'timed out after 5 s' END
        FROM (
            SELECT p.id, t, random() AS r,
                   p.id %% 101 = 0
                   OR random() < 0.004
                   OR (extract(epoch FROM t)::bigint / 3600 + p.id * 7) %% 173 = 0
                   AS down
            FROM projects_project p
            CROSS JOIN LATERAL (
                SELECT p.created_at + (p.id %% p.interval) * interval '1 second'
                AS at
            ) AS origin
            CROSS JOIN LATERAL (
                SELECT %(start)s::timestamptz + %(day)s * interval '1 day' AS start
            ) AS day
            CROSS JOIN LATERAL generate_series(
                origin.at + ceil(
                    greatest(extract(epoch FROM day.start - origin.at), 0)
                    / p.interval
                ) * p.interval * interval '1 second',
                day.start + interval '1 day' - interval '1 microsecond',
                p.interval * interval '1 second'
            ) AS t
            WHERE p.id %% 199 <> 0 AND t <= now()
        ) AS polls
        ORDER BY t
        """,
        {"start": seed_start(), "day": day},
    )


def seed_start() -> datetime:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT min(created_at) FROM projects_project")
        return cursor.fetchone()[0]


def seed_rollups() -> None:
    from projects.housekeeping.rollups import rebuild_rollups

    rebuild_rollups()


def seed_current_state() -> None:
    run_sql(
        """
        UPDATE projects_project p
        SET last_polled_at = r.polled_at,
            last_status = CASE WHEN r.up THEN 'up' ELSE 'down' END,
            last_status_code = r.status_code,
            last_response_time_ms = r.response_time_ms,
            consecutive_failures = CASE WHEN r.up THEN 0 ELSE 1 END
        FROM projects_project p2
        CROSS JOIN LATERAL (
            SELECT * FROM projects_pollresult
            WHERE project_id = p2.id
            ORDER BY polled_at DESC LIMIT 1
        ) AS r
        WHERE p.id = p2.id
        """
    )


# Timing


def time_pages() -> list[dict]:
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client(HTTP_ACCEPT_ENCODING="gzip")
    client.force_login(user)
    rows = [time_page(client, label, url) for label, url in pages()]
    return [*rows, time_with_more_projects(client)]


def time_with_more_projects(client, total: int = 5000) -> dict:
    """The overview with `total` projects: the extra ones, never polled, are
    rolled back afterwards."""
    from django.db import transaction

    with transaction.atomic():
        seed_projects(PROJECTS + 1, total)
        row = time_page(client, f"overview, page 1, {total:,} projects", "/")
        transaction.set_rollback(True)
    return row


def pages() -> list[tuple[str, str]]:
    busiest, typical, all_down = sample_projects()
    return [
        ("overview, page 1", "/"),
        ("overview, page 2", "/?page=2"),
        ("overview, search", "/?q=svc12"),
        ("overview, down only", "/?state=down"),
        *[
            (f"busiest project, {key}", f"/projects/{busiest}/?range={key}")
            for key in ("1h", "24h", "7d", "30d")
        ],
        (
            "busiest project, 30d, down polls",
            f"/projects/{busiest}/?range=30d&status=down",
        ),
        ("5-minute project, 24h", f"/projects/{typical}/?range=24h"),
        ("5-minute project, 30d", f"/projects/{typical}/?range=30d"),
        ("all-down project, 30d", f"/projects/{all_down}/?range=30d"),
    ]


def sample_projects() -> tuple[int, int, int]:
    from django.db.models import Sum

    from projects.models import HourlyRollup, Project

    by_polls = (
        HourlyRollup.objects.values("project_id")
        .annotate(polls=Sum("polls"), failures=Sum("failures"))
        .order_by("-polls")
    )
    busiest = by_polls[0]["project_id"]
    typical = Project.objects.filter(interval=300, enabled=True).order_by("pk")[0].pk
    all_down = next(
        row["project_id"] for row in by_polls if row["polls"] == row["failures"]
    )
    return busiest, typical, all_down


def time_page(client, label: str, url: str) -> dict:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    # Each request starts by clearing the query log, so start from empty and
    # count before the next request.
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    queries = len(captured)
    for _ in range(WARMUP):
        client.get(url)
    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    return {
        "label": label,
        "url": url,
        "queries": queries,
        "kb": len(response.content) / 1024,
        "median": statistics.median(times),
        "p95": statistics.quantiles(times, n=20, method="inclusive")[-1],
    }


def make_report(rows: list[dict]) -> str:
    lines = [
        f"## Dashboard render times ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"- Machine: {os.cpu_count()} CPUs, {memory_gib():.0f} GiB RAM, "
        f"{platform.system()} {platform.release()}; {server_version()}; "
        f"load average {os.getloadavg()[0]:.1f} over the last minute of timing",
        f"- Data: {data_summary()}",
        f"- Command: `.venv/bin/python {' '.join(sys.argv)}`; {REQUESTS} "
        f"requests per page through the Django test client (gzip accepted), "
        f"after {WARMUP} warm-up requests",
        "",
        markdown_table(
            [
                {
                    "page": r["label"],
                    "queries": r["queries"],
                    "response (KiB)": f"{r['kb']:.0f}",
                    "median (ms)": f"{r['median']:.1f}",
                    "p95 (ms)": f"{r['p95']:.1f}",
                }
                for r in rows
            ]
        ),
    ]
    return "\n".join(lines) + "\n"


def memory_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def server_version() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return f"PostgreSQL {cursor.fetchone()[0].split()[0]}"


def data_summary() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM projects_project),"
            " (SELECT count(*) FROM projects_pollresult),"
            " (SELECT count(*) FROM projects_hourlyrollup),"
            " now() - (SELECT max(polled_at) FROM projects_pollresult)"
        )
        projects, polls, rollups, age = cursor.fetchone()
    return (
        f"{projects:,} projects, {polls:,} poll results over {DAYS} days, "
        f"{rollups:,} hourly rollups; newest poll {age.total_seconds() / 60:.0f} "
        "min old when timed"
    )


if __name__ == "__main__":
    main()
