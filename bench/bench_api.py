"""Benchmark: the REST API under gunicorn as in the Procfile, on PostgreSQL.

Makes a fresh database (monitor_bench_api), 10,000 projects with tags, 30
days of hourly rollups for the projects whose uptime is asked, an API key,
a real runpoller and a local target server; then measures, one request at
a time on a fresh connection (as gunicorn's sync workers serve them):

- GET /api/v1/projects/?page_size=100 over pages spread across the list;
- GET /api/v1/projects/{id}/uptime/?range=30d;
- POST /api/v1/projects/ from --clients clients at once (each a process of
  its own keeping its connection open, as a provisioning script's HTTP
  session does): creates per second, and how many of the created projects
  the poller then polled (a create reaches it through the post_save
  signal, as an admin save does). Beside the web workers' CPU per create,
  the poller's, the database backends' and the clients' own, the database
  sessions opened per create, and how often a backend of the database was
  seen waiting on a lock: where a create's time goes.

    .venv/bin/python bench/bench_api.py
    .venv/bin/python bench/bench_api.py --projects 10000 --requests 300 --creates 500
    .venv/bin/python bench/bench_api.py --requests 0 --clients 4   # creates only
    .venv/bin/python bench/bench_api.py --publish    # a file in docs/benchmarks/

DATABASE_URL's server is used (default postgres://postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import multiprocessing
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
    BackendCpu,
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
CLIENTS = 8
UPTIME_PROJECTS = 50
TAGS = 10
CONTROL_TOKEN = "bench-api-control-token"


def main() -> None:
    args = parse_args()
    database = fresh_database_url(args.database, base=BASE)
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
        with CreateCosts(database, web, poller) as costs:
            created, seconds, create_times, clients_cpu = create_projects(
                web.port, key, target, args.creates, args.clients
            )
        polled, polled_within = target.wait_for(list(created), timeout=30)
    to_poll = sorted(
        target.first_seen[path] - at
        for path, at in created.items()
        if path in target.first_seen
    )
    load_after = Path("/proc/loadavg").read_text().split()[0]
    creates_cpu = costs.web_cpu
    text = (
        report(args, lists, uptimes, created, seconds, polled, polled_within)
        + f"\nOne create took {percentile_ms(create_times, 0.5)} ms at the median, "
        f"{percentile_ms(create_times, 0.95)} ms at p95. From a create's answer "
        f"to the target's first request for its URL: {percentile_ms(to_poll, 0.5)} "
        f"ms at the median, {percentile_ms(to_poll, 0.99)} ms at p99, "
        f"{percentile_ms(to_poll, 1.0)} ms at most.\n"
        "\nCPU of the web workers per request (user + system; it follows the "
        "work done, not the machine's load): "
        f"list {per_request_ms(lists_cpu, args.requests + 10)} ms, "
        f"uptime {per_request_ms(uptimes_cpu, args.requests + 10)} ms, "
        f"create {per_request_ms(creates_cpu, len(created))} ms.\n"
        + costs.summary(len(created), clients_cpu)
        + f"\nLoad average (1 min) before: {load_before}, after: {load_after}.\n"
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
        "--database", default="monitor_bench_api", help="made afresh on the server"
    )
    parser.add_argument("--clients", type=int, default=CLIENTS, help="creating at once")
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


class BurstServer(ThreadingHTTPServer):
    # socketserver listens with a backlog of 5: a poller that starts a
    # burst of new projects' polls at once (creates are sent to it in
    # batches) had the connections beyond it wait for a SYN retry, 1 s.
    request_queue_size = 1024


class CountingTarget:
    """A local HTTP server that answers 200 and counts requests by path."""

    def __enter__(self) -> CountingTarget:
        # Each path, and when it was first requested (time.monotonic():
        # the same clock in every process of the machine).
        self.first_seen: dict[str, float] = {}
        lock = threading.Lock()
        first_seen = self.first_seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with lock:
                    first_seen.setdefault(self.path, time.monotonic())
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = BurstServer(("127.0.0.1", 0), Handler)
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
        while (
            time.monotonic() - started < timeout
            and not wanted <= self.first_seen.keys()
        ):
            time.sleep(0.05)
        return len(wanted & self.first_seen.keys()), time.monotonic() - started


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

    def cpu_seconds(self) -> float:
        return sum(process_cpu_seconds(pid) for pid in process_tree(self.process.pid))

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
    port: int, key: str, target: CountingTarget, count: int, clients: int
) -> tuple[dict[str, float], float, list[float], float]:
    """POST `count` projects from `clients` client processes at once; their
    target paths with when each create was answered (time.monotonic()),
    the seconds it took, each create's latency and the clients' own CPU
    seconds. Processes, not threads: the clients' JSON
    and HTTP must not share one interpreter (and its lock) with each other."""
    context = multiprocessing.get_context("spawn")
    ready, go, results = context.Barrier(clients + 1), context.Event(), context.Queue()
    processes = [
        context.Process(
            target=create_client,
            args=(port, key, target.port, range(n, count, clients), ready, go, results),
        )
        for n in range(clients)
    ]
    for process in processes:
        process.start()
    ready.wait(timeout=60)
    started = time.perf_counter()
    go.set()
    answers = [results.get(timeout=600) for _ in processes]
    elapsed = time.perf_counter() - started
    for process in processes:
        process.join()
    failures = [failure for answer in answers for failure in answer["failures"]]
    if failures:
        raise SystemExit(f"{len(failures)} creates failed, e.g. {failures[0]}")
    latencies = sorted(t for answer in answers for t in answer["latencies"])
    cpu = sum(answer["cpu"] for answer in answers)
    answered = {path: at for answer in answers for path, at in answer["answered"]}
    return answered, elapsed, latencies, cpu


def create_client(port, key, target_port, numbers, ready, go, results) -> None:
    """One client: its numbers' projects, one after the other, on one
    kept-alive connection (gunicorn keeps it for --keep-alive seconds)."""
    ready.wait(timeout=60)
    go.wait()
    cpu = time.process_time()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    latencies, failures, answered = [], [], []
    for number in numbers:
        body = {
            "name": f"created {number:05}",
            "url": f"http://127.0.0.1:{target_port}/created/{number}",
            "interval": 1,
            "interval_unit": "hours",
            "tags": ["tag 1"],
        }
        started = time.perf_counter()
        connection.request("POST", "/api/v1/projects/", json.dumps(body), headers)
        response = connection.getresponse()
        answer = response.read()
        latencies.append(time.perf_counter() - started)
        answered.append((f"/created/{number}", time.monotonic()))
        if response.status != 201:
            failures.append(f"HTTP {response.status}: {answer[:200]!r}")
    connection.close()
    results.put(
        {
            "latencies": latencies,
            "answered": answered,
            "failures": failures,
            "cpu": time.process_time() - cpu,
        }
    )


class CreateCosts:
    """Where the creates' time goes: the CPU of the web workers, the poller
    and the database's backends, the sessions opened on the database and
    how often one of its backends waited on a lock (pg_stat_activity,
    sampled every SAMPLE_SECONDS; a backend that lived between two samples,
    such as a connection opened for one call, is not seen, but its session
    is counted)."""

    # Each sample reads /proc and pg_stat_activity: every 0.05 s, that was
    # most of the 7 % of a core this process took from the creates.
    SAMPLE_SECONDS = 0.25

    def __init__(self, database: str, web: Gunicorn, poller: Poller) -> None:
        self.database, self.web, self.poller = database, web, poller
        self.backends = BackendCpu(database)
        self.samples = 0
        self.waits: dict[str, int] = {}

    def __enter__(self) -> CreateCosts:
        self.web_cpu = -self.web.cpu_seconds()
        self.poller_cpu = -self.poller.cpu_seconds()
        self.database_cpu = -self.backends()
        self.sessions = -self._sessions()
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._sampler.join()
        self.web_cpu += self.web.cpu_seconds()
        self.poller_cpu += self.poller.cpu_seconds()
        self.database_cpu += self.backends()
        self.sessions += self._sessions()

    def summary(self, creates: int, clients_cpu: float) -> str:
        waits = ", ".join(f"{name} {n}" for name, n in sorted(self.waits.items()))
        return (
            "\nPer create, CPU of the poller "
            f"{per_request_ms(self.poller_cpu, creates)} ms, of the database's "
            f"backends {per_request_ms(self.database_cpu, creates)} ms, of the "
            f"clients {per_request_ms(clients_cpu, creates)} ms; "
            f"{self.sessions / creates:.2f} database sessions opened. "
            f"Backends seen waiting in {self.samples} samples: {waits or 'none'}.\n"
        )

    # Both from another database: neither counts as the database's own.

    def _sessions(self) -> int:
        import psycopg

        with psycopg.connect(self.backends.admin_url, autocommit=True) as connection:
            return connection.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = %s",
                [self.backends.database],
            ).fetchone()[0]

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.backends.admin_url, autocommit=True) as connection:
            while not self._stop.wait(self.SAMPLE_SECONDS):
                self.backends()
                rows = connection.execute(
                    "SELECT wait_event_type || ':' || wait_event FROM "
                    "pg_stat_activity WHERE datname = %s AND state = 'active' "
                    "AND wait_event_type IN ('Lock', 'LWLock', 'IO')",
                    [self.backends.database],
                ).fetchall()
                self.samples += 1
                for (wait,) in rows:
                    self.waits[wait] = self.waits.get(wait, 0) + 1


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
        f"{len(created)} creates from {args.clients} clients in {seconds:.1f} s: "
        f"**{len(created) / seconds:.0f} creates/s** (target ≥ 100); the poller "
        f"polled {polled} of them within {polled_within:.1f} s of the last create."
    )
    return (
        f"### REST API, {args.projects:,} projects "
        f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n"
        f"`{procfile_web()}` with WEB_CONCURRENCY={args.workers}, PostgreSQL, "
        f"each GET alone on a fresh connection, the creates from {args.clients} "
        "client processes each on a kept-alive connection, runpoller running; "
        f"{machine()}; {git_head()}.\n\n{markdown_table(rows)}\n\n{creates}\n"
    )


if __name__ == "__main__":
    main()
