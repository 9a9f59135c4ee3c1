"""Benchmark: the REST API under gunicorn as in the Procfile, on PostgreSQL.

Makes a fresh database (monitor_bench_api), 10,000 projects with tags, 30
days of hourly rollups for the projects whose uptime is asked, an API key,
a real runpoller and a local target server; then measures, one request at
a time on a fresh connection (as gunicorn's sync workers serve them):

- GET /api/v1/projects/?page_size=100 over pages spread across the list;
- GET /api/v1/projects/{id}/uptime/?range=30d;
- POST /api/v1/projects/ from CREATE_THREADS clients at once: creates per
  second, and how many of the created projects the poller then polled (a
  create reaches it through the post_save signal, as an admin save does).

    .venv/bin/python bench/bench_api.py
    .venv/bin/python bench/bench_api.py --projects 10000 --requests 300 --creates 500
    .venv/bin/python bench/bench_api.py --publish    # a file in docs/benchmarks/

DATABASE_URL's server is used (default postgres://postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness import (
    ROOT,
    django_env,
    free_port,
    fresh_database_url,
    git_head,
    machine,
    manage,
    markdown_table,
    percentile_ms,
    process_cpu_seconds,
    process_tree,
    setup_django,
)
from run_logs import publish_run

BASE = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
CREATE_THREADS = 4
UPTIME_PROJECTS = 50
TAGS = 10
CONTROL_TOKEN = "bench-api-control-token"


def main() -> None:
    args = parse_args()
    database = fresh_database_url("monitor_bench_api", base=BASE)
    manage(database, "migrate", "--noinput")
    setup_django(database)
    key, uptime_ids = seed(args.projects)
    analyze()
    load_before = Path("/proc/loadavg").read_text().split()[0]
    with (
        CountingTarget() as target,
        Poller(database) as poller,
        Gunicorn(database, args.workers) as web,
    ):
        poller.wait_registered()
        web.wait_ready(key)
        cpu = web.cpu_seconds()
        lists = timed_gets(web.port, key, list_paths(args.projects), args.requests)
        cpu, lists_cpu = web.cpu_seconds(), web.cpu_seconds() - cpu
        uptimes = timed_gets(web.port, key, uptime_paths(uptime_ids), args.requests)
        cpu, uptimes_cpu = web.cpu_seconds(), web.cpu_seconds() - cpu
        created, seconds, create_times = create_projects(
            web.port, key, target, args.creates
        )
        creates_cpu = web.cpu_seconds() - cpu
        polled, polled_within = target.wait_for(created, timeout=30)
    load_after = Path("/proc/loadavg").read_text().split()[0]
    text = (
        report(args, lists, uptimes, created, seconds, polled, polled_within)
        + f"\nOne create took {percentile_ms(create_times, 0.5)} ms at the median, "
        f"{percentile_ms(create_times, 0.95)} ms at p95.\n"
        "\nCPU of the web workers per request (user + system; it follows the "
        "work done, not the machine's load): "
        f"list {per_request_ms(lists_cpu, args.requests + 10)} ms, "
        f"uptime {per_request_ms(uptimes_cpu, args.requests + 10)} ms, "
        f"create {per_request_ms(creates_cpu, len(created))} ms.\n"
        f"\nLoad average (1 min) before: {load_before}, after: {load_after}.\n"
    )
    print(text)
    if args.publish:
        print(f"Published: {publish_run('api', text)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=300, help="per endpoint")
    parser.add_argument("--creates", type=int, default=500)
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2))
    )
    parser.add_argument(
        "--publish", action="store_true", help="write the run to docs/benchmarks/"
    )
    return parser.parse_args()


# Setting up ------------------------------------------------------------------


def seed(count: int) -> tuple[str, list[int]]:
    """The projects (paused: the poller only polls what the API creates),
    tags, rollups; returns a write key and the projects with rollups."""
    from projects.models import ApiKey, HourlyRollup, Project, Tag

    tags = Tag.objects.bulk_create(Tag(name=f"tag {n}") for n in range(TAGS))
    projects = Project.objects.bulk_create(
        (
            Project(name=f"bench {n:05}", url=f"http://127.0.0.1:9/{n}", enabled=False)
            for n in range(count)
        ),
        batch_size=2000,
    )
    links = Project.tags.through
    links.objects.bulk_create(
        (links(project_id=p.pk, tag_id=tags[p.pk % TAGS].pk) for p in projects),
        batch_size=5000,
    )
    measured = random.Random(1).sample(projects, UPTIME_PROJECTS)
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    HourlyRollup.objects.bulk_create(
        (
            HourlyRollup(
                project=p,
                hour=now - timedelta(hours=h),
                polls=60,
                failures=h % 7 == 0,
                responses=60,
                response_time_sum_ms=60 * 120,
                response_time_max_ms=300,
            )
            for p in measured
            for h in range(1, 31 * 24)
        ),
        batch_size=5000,
    )
    _, key = ApiKey.issue("bench", "write")
    return key, [p.pk for p in measured]


def analyze() -> None:
    """Give the planner the statistics a running install has (autovacuum
    gathers them within a minute of a bulk load). Without them it guesses
    a handful of projects per team and sorts the whole team for each page
    of the list (46 ms of a 50 ms query) instead of walking the team's
    (team, name) index."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


class CountingTarget:
    """A local HTTP server that answers 200 and counts requests by path."""

    def __enter__(self) -> CountingTarget:
        self.paths: set[str] = set()
        lock = threading.Lock()
        paths = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with lock:
                    paths.add(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.server.shutdown()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_for(self, paths: list[str], *, timeout: float) -> tuple[int, float]:
        """How many of `paths` were requested, waiting up to `timeout`, and
        the seconds it took."""
        started = time.monotonic()
        wanted = set(paths)
        while time.monotonic() - started < timeout and not wanted <= self.paths:
            time.sleep(0.05)
        return len(wanted & self.paths), time.monotonic() - started


class Poller:
    def __init__(self, database: str) -> None:
        self.env = django_env(
            database,
            POLLER_CONTROL_BIND=f"127.0.0.1:{free_port()}",
            POLLER_CONTROL_TOKEN=CONTROL_TOKEN,
            LOG_LEVEL="WARNING",
        )

    def __enter__(self) -> Poller:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runpoller"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
        )
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def wait_registered(self) -> None:
        from projects.models import PollerNode

        deadline = time.monotonic() + 60
        while not PollerNode.objects.exclude(control_url="").exists():
            if time.monotonic() > deadline:
                raise SystemExit("runpoller did not register within 60 s")
            time.sleep(0.2)


class Gunicorn:
    """The Procfile's web process, on 127.0.0.1 only."""

    def __init__(self, database: str, workers: int) -> None:
        self.port = free_port()
        command = procfile_web().replace("0.0.0.0", "127.0.0.1")
        self.command = ["sh", "-c", f"exec {command}"]
        self.env = django_env(
            database,
            PORT=str(self.port),
            WEB_CONCURRENCY=str(workers),
            HTTPS="false",
            LOG_LEVEL="WARNING",
            API_THROTTLE="1000000/min",
            POLLER_CONTROL_TOKEN=CONTROL_TOKEN,
            PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        )

    def __enter__(self) -> Gunicorn:
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL
        )
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)

    def cpu_seconds(self) -> float:
        """The CPU the master and its workers have used so far."""
        return sum(process_cpu_seconds(pid) for pid in process_tree(self.process.pid))

    def wait_ready(self, key: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if request(self.port, key, "GET", "/api/v1/status/")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("gunicorn did not answer within 60 s")


def per_request_ms(cpu_seconds: float, requests: int) -> str:
    return f"{cpu_seconds / requests * 1000:.1f}"


def procfile_web() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise SystemExit("the Procfile has no web process")


# Measuring -------------------------------------------------------------------


def request(
    port: int, key: str, method: str, path: str, body=None
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        connection.request(
            method, path, body=body and json.dumps(body), headers=headers
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def list_paths(count: int) -> itertools.cycle:
    pages = max(count // 100, 1)
    return itertools.cycle(
        f"/api/v1/projects/?page_size=100&page={page}"
        for page in random.Random(2).sample(range(1, pages + 1), min(pages, 50))
    )


def uptime_paths(ids: list[int]) -> itertools.cycle:
    return itertools.cycle(f"/api/v1/projects/{pk}/uptime/?range=30d" for pk in ids)


def timed_gets(port: int, key: str, paths, count: int) -> list[float]:
    for _ in range(10):  # warm up: connections, plans, imports
        request(port, key, "GET", next(paths))
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        status, body = request(port, key, "GET", next(paths))
        seconds.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"HTTP {status}: {body[:300]!r}")
    return sorted(seconds)


def create_projects(
    port: int, key: str, target: CountingTarget, count: int
) -> tuple[list[str], float, list[float]]:
    """POST `count` projects from CREATE_THREADS clients; their target
    paths, the seconds it took and each create's latency."""
    numbers = iter(range(count))
    lock = threading.Lock()
    failures: list[str] = []
    latencies: list[float] = []

    def client() -> None:
        while True:
            with lock:
                number = next(numbers, None)
            if number is None:
                return
            body = {
                "name": f"created {number:05}",
                "url": target.url(f"/created/{number}"),
                "interval": 1,
                "interval_unit": "hours",
                "tags": ["tag 1"],
            }
            started = time.perf_counter()
            status, answer = request(port, key, "POST", "/api/v1/projects/", body)
            latencies.append(time.perf_counter() - started)
            if status != 201:
                failures.append(f"HTTP {status}: {answer[:200]!r}")

    threads = [threading.Thread(target=client) for _ in range(CREATE_THREADS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} creates failed, e.g. {failures[0]}")
    return [f"/created/{n}" for n in range(count)], elapsed, sorted(latencies)


# Reporting -------------------------------------------------------------------


def report(args, lists, uptimes, created, seconds, polled, polled_within) -> str:
    rows = [
        {
            "request": "GET projects/ (page of 100)",
            "n": len(lists),
            "p50 ms": percentile_ms(lists, 0.50),
            "p95 ms": percentile_ms(lists, 0.95),
            "max ms": percentile_ms(lists, 1.0),
            "target": "p95 < 100 ms",
        },
        {
            "request": "GET projects/{id}/uptime/?range=30d",
            "n": len(uptimes),
            "p50 ms": percentile_ms(uptimes, 0.50),
            "p95 ms": percentile_ms(uptimes, 0.95),
            "max ms": percentile_ms(uptimes, 1.0),
            "target": "p95 < 50 ms",
        },
    ]
    creates = (
        f"{len(created)} creates from {CREATE_THREADS} clients in {seconds:.1f} s: "
        f"**{len(created) / seconds:.0f} creates/s** (target ≥ 100); the poller "
        f"polled {polled} of them within {polled_within:.1f} s of the last create."
    )
    return (
        f"### REST API, {args.projects:,} projects "
        f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n"
        f"`{procfile_web()}` with WEB_CONCURRENCY={args.workers}, PostgreSQL, "
        f"one request at a time on a fresh connection, runpoller running; "
        f"{machine()}; {git_head()}.\n\n{markdown_table(rows)}\n\n{creates}\n"
    )


if __name__ == "__main__":
    main()
