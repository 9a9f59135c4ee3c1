"""The references the capacity benchmark runs beside the engine.

    python bench/references.py bare --client pycurl --url URL --threads 200 --seconds 30
    python bench/references.py naive --database-url URL --seconds 120

`bare`: T threads requesting one URL back to back, each with its own
client: `pycurl`, a bare pycurl.Curl handle set up once; `curl`, the
engine's libcurl handle (polling.engine.probe.make_handle, one
Transport.perform per request); `httpx`, an httpx.Client configured as
the engine's probe was before it moved to libcurl. Its req/s is the ceiling
for that client in one Python process. `--ca-bundle` trusts a local
certificate authority for https URLs.

`naive`: the seed's design. One thread per enabled project, each running
`while True: request; INSERT one row (its own commit); sleep(interval)`.
First polls are spread like the engine's, so both see the same load. Rows
go straight through psycopg or sqlite3 in autocommit mode; threads share a
few connections (8 on PostgreSQL, 1 on SQLite) because 10,000 connections
would exhaust a shared PostgreSQL server's max_connections.

Each prints one JSON line with what it managed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polling.engine.config import PollerConfig  # noqa: E402
from polling.engine.probe import make_handle  # noqa: E402
from polling.engine.scheduler import first_poll_offset  # noqa: E402
from polling.engine.stats import percentile  # noqa: E402
from polling.engine.transport import Request  # noqa: E402
from projects.checks.units import SECONDS_PER_UNIT  # noqa: E402

SPREAD_SECONDS = PollerConfig().spread_seconds
STOP_GRACE_SECONDS = 15


def httpx_client(ca_bundle: str | None = None):
    """An httpx.Client as the probe made them before issue #12: certifi's
    roots, redirects followed, nothing from the environment."""
    import ssl

    import certifi
    import httpx

    context = ssl.create_default_context(cafile=ca_bundle or certifi.where())
    return httpx.Client(
        verify=context,
        follow_redirects=True,
        max_redirects=5,
        headers={"User-Agent": "uptime-monitor/0.1"},
        trust_env=False,
    )


def httpx_getter(url: str, ca_bundle: str | None):
    client = httpx_client(ca_bundle)
    return lambda: client.get(url, timeout=10).raise_for_status()


def curl_getter(url: str, ca_bundle: str | None):
    handle = make_handle(ca_bundle=ca_bundle)
    request = Request("GET", url)

    def get() -> None:
        if handle.perform(request, timeout_ms=10_000).status_code != 200:
            raise RuntimeError("not 200")

    return get


def pycurl_getter(url: str, ca_bundle: str | None):
    """Bare pycurl: one Curl handle, set up once, body thrown away."""
    import certifi
    import pycurl

    curl = pycurl.Curl()
    curl.setopt(pycurl.URL, url)
    curl.setopt(pycurl.NOSIGNAL, 1)
    curl.setopt(pycurl.CAINFO, ca_bundle or certifi.where())
    curl.setopt(pycurl.WRITEFUNCTION, len)

    def get() -> None:
        curl.perform()
        if curl.getinfo(pycurl.RESPONSE_CODE) != 200:
            raise RuntimeError("not 200")

    return get


GETTERS = {"httpx": httpx_getter, "curl": curl_getter, "pycurl": pycurl_getter}


def bare(
    url: str, threads: int, seconds: float, *, client: str, ca_bundle: str | None
) -> dict:
    counts = {"requests": 0, "errors": 0}
    counts_lock = threading.Lock()
    deadline = time.monotonic() + seconds
    barrier = threading.Barrier(threads + 1)

    def hammer() -> None:
        get = GETTERS[client](url, ca_bundle)
        barrier.wait()
        done = errors = 0
        while time.monotonic() < deadline:
            try:
                get()
                done += 1
            except Exception:
                errors += 1
        with counts_lock:
            counts["requests"] += done
            counts["errors"] += errors

    workers = [threading.Thread(target=hammer) for _ in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.monotonic()
    for worker in workers:
        worker.join()
    return {
        **counts,
        "client": client,
        "threads": threads,
        "seconds": time.monotonic() - started,
    }


# The naive poller


class Rows:
    """INSERTs one row per poll, each in its own transaction."""

    def __init__(self, database_url: str) -> None:
        self.postgres = database_url.startswith("postgres")
        count = 8 if self.postgres else 1
        self._connections = [self._connect(database_url) for _ in range(count)]
        self._locks = [threading.Lock() for _ in range(count)]
        mark = "%s" if self.postgres else "?"
        self._sql = (
            "INSERT INTO projects_pollresult (project_id, polled_at, up, "
            "status_code, response_time_ms, error_message) VALUES "
            f"({', '.join([mark] * 6)})"
        )
        self.failures: list[str] = []  # list.append is thread-safe

    def _connect(self, database_url: str):
        if self.postgres:
            import psycopg

            return psycopg.connect(database_url, autocommit=True)
        import sqlite3

        path = database_url.removeprefix("sqlite:///")
        connection = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=10
        )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def projects(self) -> list[tuple]:
        with self._locks[0]:
            return (
                self._connections[0]
                .execute(
                    "SELECT id, url, interval, interval_unit, timeout_seconds "
                    "FROM projects_project WHERE enabled ORDER BY id"
                )
                .fetchall()
            )

    def insert(self, project_id: int, row: tuple) -> None:
        slot = project_id % len(self._connections)
        polled_at = row[0] if self.postgres else _sqlite_datetime(row[0])
        try:
            with self._locks[slot]:
                self._connections[slot].execute(
                    self._sql, (project_id, polled_at, *row[1:])
                )
        except Exception as exc:
            self.failures.append(f"{type(exc).__name__}: {exc}")


def _sqlite_datetime(value: datetime) -> str:
    # As Django stores an aware datetime in SQLite: naive UTC text.
    return str(value.astimezone(UTC).replace(tzinfo=None))


def _request(client, url: str, timeout: float) -> tuple:
    polled_at = datetime.now(UTC)
    start = time.monotonic()
    try:
        response = client.get(url, timeout=timeout)
    except Exception as exc:
        return (polled_at, False, None, None, type(exc).__name__)
    elapsed_ms = round((time.monotonic() - start) * 1000)
    up = response.status_code == 200
    error = "" if up else f"expected 200, got {response.status_code}"
    return (polled_at, up, response.status_code, elapsed_ms, error)


def naive(database_url: str, seconds: float) -> dict:
    rows = Rows(database_url)
    projects = rows.projects()
    stop = threading.Event()
    lags: list[float] = []  # one per poll

    def poll_forever(project: tuple, first_due: float) -> None:
        project_id, url, interval, unit, timeout = project
        interval *= SECONDS_PER_UNIT[unit]
        client = httpx_client()
        polled = 0
        if stop.wait(max(first_due - time.monotonic(), 0)):
            return
        while not stop.is_set():
            lags.append(time.monotonic() - (first_due + polled * interval))
            rows.insert(project_id, _request(client, url, timeout))
            polled += 1
            stop.wait(interval)

    started, started_at = time.monotonic(), time.time()
    threads = []
    for rank, project in enumerate(projects):
        interval = project[2] * SECONDS_PER_UNIT[project[3]]
        first_due = started + first_poll_offset(
            rank, len(projects), interval, SPREAD_SECONDS
        )
        thread = threading.Thread(
            target=poll_forever, args=(project, first_due), daemon=True
        )
        try:
            thread.start()
        except RuntimeError:  # can't start new thread
            break
        threads.append(thread)
    stop.wait(max(started + seconds - time.monotonic(), 0))
    # Event.set() wakes 10,000 waiters one by one, which takes seconds.
    stopped_at = time.time()
    stop.set()
    _join_all(threads, time.monotonic() + STOP_GRACE_SECONDS)
    return {
        "projects": len(projects),
        "threads": len(threads),
        "polls": len(lags),
        "insert_errors": len(rows.failures),
        "first_insert_error": rows.failures[0] if rows.failures else "",
        "started_at": started_at,
        "stopped_at": stopped_at,
        **_lag_summary(lags),
    }


def _join_all(threads: list[threading.Thread], deadline: float) -> None:
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0))


def _lag_summary(lags: list[float]) -> dict:
    """Lag of each poll behind its tick on the ideal fixed cadence."""
    if not lags:
        return {"lag_p50_ms": None, "lag_p99_ms": None, "lag_max_ms": None}
    lags = sorted(lags)

    def at(percent: float) -> float:
        return round(percentile(lags, percent) * 1000, 1)

    return {"lag_p50_ms": at(50), "lag_p99_ms": at(99), "lag_max_ms": at(100)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    bare_args = commands.add_parser("bare", help="threads hammering one URL")
    bare_args.add_argument("--client", choices=sorted(GETTERS), default="httpx")
    bare_args.add_argument("--ca-bundle", help="PEM file of CAs to trust")
    bare_args.add_argument("--url", required=True)
    bare_args.add_argument("--threads", type=int, required=True)
    bare_args.add_argument("--seconds", type=float, required=True)
    naive_args = commands.add_parser("naive", help="a thread per project")
    naive_args.add_argument("--database-url", required=True)
    naive_args.add_argument("--seconds", type=float, required=True)
    args = parser.parse_args()
    if args.command == "bare":
        result = bare(
            args.url,
            args.threads,
            args.seconds,
            client=args.client,
            ca_bundle=args.ca_bundle,
        )
    else:
        result = naive(args.database_url, args.seconds)
    print(json.dumps(result), flush=True)
    os._exit(0)  # threads stuck in a request must not hold the exit


if __name__ == "__main__":
    main()
