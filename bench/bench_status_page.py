"""Benchmark: a public status page of 500 projects in 10 sections with a
year of daily rollups, on PostgreSQL under gunicorn as in the Procfile.

Creates its own database (monitor_bench_status), seeds it with set-based
SQL (500 projects, 182,500 daily rollups, today's hourly rollups, an open
incident with two updates), starts gunicorn, and times over HTTP:

- nothing cached: every request renders the page and reads its year of
  rollups afresh, at 90 and 365 days shown;
- after a change: the page's version moved (as after an incident update),
  so it renders again, with the compacted days' cells from their cache;
- warm: the same page again (served from the cache);
- badges: a project's status and 30-day uptime badges.

Besides the time of each request, it reports the CPU the web process
(gunicorn's workers) and the database's backends used per request, read
from /proc: on a machine shared with other work, times move with its
load, CPU much less so.

    .venv/bin/python bench/bench_status_page.py
    .venv/bin/python bench/bench_status_page.py --publish   # a file in docs/benchmarks/

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server.
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from bench_pings import Gunicorn
from harness import (
    BackendCpu,
    ProcessSample,
    free_port,
    git_head,
    markdown_table,
    percentile,
)
from run_logs import publish_run

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "monitor_bench_status"
SERVER_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432")
PROJECTS = 500
SECTIONS = 10
DAYS = 365


def main() -> None:
    args = parse_args()
    database_url = f"{SERVER_URL}/{DB_NAME}"
    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB_NAME}")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    started = time.perf_counter()
    migrate(env)
    with psycopg.connect(database_url, autocommit=True) as conn:
        seed(conn)
        badge_key = conn.execute(
            "SELECT badge_key FROM projects_project ORDER BY id LIMIT 1"
        ).fetchone()[0]
        print(f"seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        port = free_port()
        load_before = os.getloadavg()[0]
        with Gunicorn(port, args.workers, env) as web:
            wait_for(port)
            cpu = Cpu(web.pid, database_url)
            rows = measure(conn, Client(port, cpu), badge_key, args.requests)
        loads = (load_before, os.getloadavg()[0])
    report = make_report(rows, args, loads)
    print(report)
    if args.append:
        with Path(args.append).open("a") as file:
            file.write(f"\n{report}\n")
    if args.publish:
        print(f"Published: {publish_run('status-page', report)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--append", metavar="FILE")
    parser.add_argument(
        "--publish", action="store_true", help="write a run file in docs/benchmarks/"
    )
    return parser.parse_args()


def migrate(env: dict) -> None:
    import subprocess

    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )


def seed(conn: psycopg.Connection) -> None:
    conn.execute(
        f"""
        INSERT INTO projects_project (
            name, kind, url, method, headers, body, follow_redirects, verify_tls,
            expected_status, keyword, keyword_mode, keyword_case_sensitive,
            json_query, json_operator, json_expected, tls_expiry_warning_days,
            interval, interval_unit, grace_seconds, timeout_seconds, enabled,
            failure_threshold, recovery_threshold, created_at, updated_at,
            last_status, consecutive_failures, state, consecutive_successes,
            badge_key, allow_insecure_redirects, team_id)
        SELECT format('service-%s', lpad(i::text, 3, '0')), 'poll',
               format('https://svc%s.example.test/health', i), 'GET', '{{}}', '',
               true, true, '200', '', 'contains', false, '', '==', '', 14,
               60, 'seconds', 60, 10, true, 3, 1, now(), now(),
               'up', 0, CASE WHEN i = 7 THEN 'down' ELSE 'up' END, 0,
               md5(i::text || clock_timestamp()::text), false, t.id
        FROM generate_series(1, {PROJECTS}) AS i,
             projects_team t WHERE t.slug = 'default'
        """
    )
    conn.execute(
        """
        INSERT INTO projects_statuspage (
            title, slug, description, logo_url, custom_domain, visibility,
            show_uptime_days, show_response_times, incidents_need_update, footer,
            created_at, updated_at, team_id)
        SELECT 'Bench status', 'bench', '', '', '', 'public', 90, true, false,
               '', now(), now(), id
        FROM projects_team WHERE slug = 'default'
        """
    )
    conn.execute(
        f"""
        INSERT INTO projects_statuspagesection (page_id, name, position, updated_at)
        SELECT p.id, format('Section %s', s), s, now()
        FROM projects_statuspage p, generate_series(1, {SECTIONS}) AS s
        """
    )
    conn.execute(
        f"""
        INSERT INTO projects_statuspagesection_projects (
            statuspagesection_id, project_id)
        SELECT s.id, p.id FROM projects_project p
        JOIN projects_statuspagesection s ON s.position = (p.id % {SECTIONS}) + 1
        """
    )
    conn.execute(
        f"""
        INSERT INTO projects_dailyrollup (
            project_id, day, polls, failures, responses, response_time_sum_ms,
            response_time_max_ms, maintenance_polls, maintenance_failures)
        SELECT p.id, current_date - d, 1440,
               CASE WHEN (p.id * 7 + d) % 31 = 0 THEN (d % 9) ELSE 0 END,
               1440, 1440 * 120, 900, 0, 0
        FROM projects_project p, generate_series(1, {DAYS - 1}) AS d
        """
    )
    conn.execute(
        """
        INSERT INTO projects_hourlyrollup (
            project_id, hour, polls, failures, responses, response_time_sum_ms,
            response_time_max_ms, maintenance_polls, maintenance_failures)
        SELECT p.id, h, 60, 0, 60, 60 * 110, 400, 0, 0
        FROM projects_project p,
             generate_series(date_trunc('day', now()), date_trunc('hour', now()),
                             interval '1 hour') AS h
        """
    )
    conn.execute(
        """
        INSERT INTO projects_incident (
            project_id, kind, title, started_at, confirmed_at, first_error,
            last_error, failed_polls, updated_at)
        VALUES (7, 'downtime', '', now() - interval '40 minutes',
                now() - interval '38 minutes', 'connection refused', '', 40,
                now() - interval '38 minutes')
        """
    )
    conn.execute(
        """
        INSERT INTO projects_statusupdate (incident_id, status, message, created_at)
        SELECT id, s, m, now() - o FROM projects_incident,
          (VALUES ('investigating', 'Looking into **errors**.', interval '30 minutes'),
                  ('identified', 'A full disk.', interval '10 minutes')) AS u(s, m, o)
        """
    )
    conn.execute("VACUUM ANALYZE")


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            get(port, "/status/bench/badge.svg")
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not answer within 30 s")


def get(port: int, path: str) -> tuple[int, float, int]:
    """(status, seconds, body bytes) of one GET on a fresh connection."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(
        "GET", path, headers={"Host": "127.0.0.1", "Accept-Encoding": "gzip"}
    )
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, time.perf_counter() - started, len(body)


class Cpu:
    """CPU seconds used so far by gunicorn (master and workers) and by
    the database's backends."""

    def __init__(self, gunicorn_pid: int, database_url: str) -> None:
        self.web = ProcessSample(gunicorn_pid, descendants=True)
        self.database = BackendCpu(database_url)

    def __call__(self) -> tuple[float, float]:
        self.web.read()
        return self.web.cpu_seconds, self.database()


@dataclass
class Client:
    port: int
    cpu: Cpu


@dataclass
class Batch:
    """Requests of one kind: their times, CPU and the last body's size."""

    timings: list[float]
    size: int
    web_cpu: float  # seconds, all requests
    database_cpu: float


def measure(conn, client: Client, badge_key: str, requests: int) -> list[dict]:
    rows = []
    # "Cold" is the page's cache cleared, not a process that has not served
    # yet: every worker imports and compiles its templates on its first
    # requests, which a running site has done long before.
    for _ in range(10):
        get(client.port, "/status/bench/")
    for days in (90, 365):
        conn.execute(
            "UPDATE projects_statuspage SET show_uptime_days = %s, "
            "updated_at = clock_timestamp()",
            [days],
        )
        # Nothing cached: a project's interval is part of the cached days'
        # key, and saving the project moves the page's version, as the
        # admin would. A new interval each time: with two values taking
        # turns, each worker had both cached after its first two requests.
        cold = timed(
            client,
            requests,
            lambda n: conn.execute(
                "UPDATE projects_project SET interval = %s, "
                "updated_at = clock_timestamp() WHERE id = 1",
                [61 + n],
            ),
        )
        rows.append(row(f"page, {days} days, nothing cached", cold))
        # After a change (an update, a state): the page is rebuilt, the
        # compacted days come from their cache.
        changed = timed(
            client,
            requests,
            lambda n: conn.execute(
                "UPDATE projects_statuspage SET updated_at = clock_timestamp()"
            ),
        )
        rows.append(row(f"page, {days} days, after a change", changed))
        for _ in range(10):  # every worker caches the page
            get(client.port, "/status/bench/")
        rows.append(row(f"page, {days} days, warm", timed(client, requests)))
    for name in ("status.svg", "uptime-30d.svg"):
        path = f"/badge/{badge_key}/{name}"
        for _ in range(10):
            get(client.port, path)
        rows.append(row(f"badge {name}, warm", timed(client, requests, path=path)))
    return rows


def timed(
    client: Client, requests: int, before=None, *, path: str = "/status/bench/"
) -> Batch:
    """`requests` GETs of `path`; `before(n)` runs ahead of the n-th
    request, untimed (its statement's CPU in the database is counted, a
    fraction of a millisecond)."""
    timings, size = [], 0
    web_before, database_before = client.cpu()
    for n in range(requests):
        if before is not None:
            before(n)
        status, seconds, size = get(client.port, path)
        assert status == 200, status
        timings.append(seconds)
    web_after, database_after = client.cpu()
    return Batch(
        timings, size, web_after - web_before, database_after - database_before
    )


def row(name: str, batch: Batch) -> dict:
    timings, count = sorted(batch.timings), len(batch.timings)
    return {
        "request": name,
        "median ms": f"{percentile(timings, 50) * 1000:.1f}",
        "p95 ms": f"{percentile(timings, 95) * 1000:.1f}",
        "web CPU ms": f"{batch.web_cpu / count * 1000:.1f}",
        "database CPU ms": f"{batch.database_cpu / count * 1000:.1f}",
        "body sent": f"{batch.size / 1024:.0f} KiB",
    }


def make_report(
    rows: list[dict], args: argparse.Namespace, loads: tuple[float, float]
) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"### bench_status_page.py, {when}\n\n"
        f"At {git_head()}. {PROJECTS} projects in {SECTIONS} sections, {DAYS} "
        f"days of daily rollups, PostgreSQL, gunicorn with {args.workers} "
        f"workers, {args.requests} requests each, {platform.node()} "
        f"({os.cpu_count()} cores), load average {loads[0]:.1f} before and "
        f"{loads[1]:.1f} after. CPU columns: per request, from /proc, "
        f"in milliseconds (a clock tick is 10 ms: averages over the "
        f"requests).\n\n{markdown_table(rows)}"
    )


if __name__ == "__main__":
    main()
