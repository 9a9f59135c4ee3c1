"""Benchmark: the ping endpoint's latency at a steady rate, on PostgreSQL.

Creates its own database (monitor_bench_pings_<BENCH_DB_SUFFIX>, default
suffix "checks"), migrates it, adds heartbeat projects, starts gunicorn as
the Procfile does (monitor.wsgi, WEB_CONCURRENCY workers, default 2, access
log on), and sends pings at a fixed rate from a pool of client threads, a
fresh connection each (gunicorn's sync workers close every connection).

Latency is measured from the moment each ping was due to go out, not from
when a client thread got round to sending it, so a server that falls
behind shows it in the numbers (no coordinated omission).

    .venv/bin/python bench/bench_pings.py                     # 200/s, 60 s
    .venv/bin/python bench/bench_pings.py --rate 400 --duration 30
    .venv/bin/python bench/bench_pings.py --publish    # a file in docs/benchmarks/

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server.
"""

from __future__ import annotations

import argparse
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from harness import markdown_table, percentile_ms
from run_logs import publish_run

ROOT = Path(__file__).resolve().parent.parent
SUFFIX = os.environ.get("BENCH_DB_SUFFIX", "checks")
DB_NAME = f"monitor_bench_pings_{SUFFIX}"
SERVER_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432")
CLIENT_THREADS = 64
WARMUP_SECONDS = 5


def main() -> None:
    args = parse_args()
    recreate_database()
    env = server_env(args)
    run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env)
    keys = add_projects(args.projects, env)
    port = free_port()
    if args.threads:
        env["GUNICORN_CMD_ARGS"] = f"--threads {args.threads}"
    with Gunicorn(port, args.workers, env):
        wait_for_server(port)
        send(port, keys, args.rate, WARMUP_SECONDS)  # connections, caches, plans
        started = time.monotonic()
        latencies, errors = send(port, keys, args.rate, args.duration)
        elapsed = time.monotonic() - started
    stored = count_results()
    report = make_report(args, latencies, errors, elapsed, stored)
    print(report)
    if args.append:
        with Path(args.append).open("a") as file:
            file.write(f"\n{report}")
    if args.publish:
        print(f"Published: {publish_run('pings', report)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200, help="pings a second")
    parser.add_argument("--duration", type=float, default=60, help="seconds")
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2))
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads per worker, through GUNICORN_CMD_ARGS (0: the Procfile's)",
    )
    parser.add_argument("--append", metavar="FILE", help="append the report here")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="write the report as a new run log in docs/benchmarks/",
    )
    return parser.parse_args()


# Setting up ------------------------------------------------------------------


def recreate_database() -> None:
    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{DB_NAME}"')


def server_env(args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"{SERVER_URL}/{DB_NAME}",
        "SECRET_KEY": "bench-pings-secret-key-not-for-deployment",
        "DEBUG": "false",
        "HTTPS": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "WEB_CONCURRENCY": str(args.workers),
    }


def run(command: list[str], env: dict[str, str]) -> None:
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def add_projects(count: int, env: dict[str, str]) -> list[str]:
    """`count` heartbeat projects, every hour with a minute's grace, made
    through the models so every column gets its default; their ping keys."""
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "monitor.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from projects.models import Project

    deadline = datetime.now(UTC) + timedelta(hours=2)
    projects = Project.objects.bulk_create(
        Project(
            name=f"bench heartbeat {n}",
            kind=Project.Kind.HEARTBEAT,
            interval=1,
            interval_unit=Project.IntervalUnit.HOURS,
            ping_key=uuid.uuid4(),
            ping_deadline=deadline,
        )
        for n in range(count)
    )
    return [str(project.ping_key) for project in projects]


def free_port() -> int:
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]


class Gunicorn:
    """The Procfile's web process, listening on 127.0.0.1:port only."""

    def __init__(self, port: int, workers: int, env: dict[str, str]) -> None:
        self.command = procfile_web().replace("0.0.0.0", "127.0.0.1")
        self.env = {**env, "PORT": str(port), "WEB_CONCURRENCY": str(workers)}
        self.env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"

    def __enter__(self) -> subprocess.Popen:
        self.process = subprocess.Popen(
            ["sh", "-c", f"exec {self.command}"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
        )
        return self.process

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def procfile_web() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise SystemExit("the Procfile has no web process")


def wait_for_server(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            status, _ = ping_once(port, "/ping/00000000-0000-0000-0000-000000000000")
            if status == 404:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not answer within 30 s")


# Sending ---------------------------------------------------------------------


def ping_once(port: int, path: str) -> tuple[int, bytes]:
    """POST a ping on a fresh connection; (status, whole answer). Plain
    sockets: http.client's header parsing would cost the client more CPU
    than the server spends, on the same two cores."""
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        "Content-Length: 2\r\nConnection: close\r\n\r\nok"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    return int(answer.split(b" ", 2)[1]), answer


def send(port: int, keys: list[str], rate: float, seconds: float):
    """Ping at `rate` a second for `seconds`, round-robin over `keys`.
    Returns the latencies (s, from each ping's due time) of the answered
    pings and a count of errors by kind."""
    due_times: queue.Queue = queue.Queue()
    latencies: list[float] = []
    errors: dict[str, int] = {}
    lock = threading.Lock()

    def client() -> None:
        while (item := due_times.get()) is not None:
            due, key = item
            time.sleep(max(due - time.monotonic(), 0))
            try:
                status, _ = ping_once(port, f"/ping/{key}")
                problem = "" if status == 200 else f"HTTP {status}"
            except OSError as error:
                problem = type(error).__name__
            finished = time.monotonic()
            with lock:
                if problem:
                    errors[problem] = errors.get(problem, 0) + 1
                else:
                    latencies.append(finished - due)

    threads = [threading.Thread(target=client) for _ in range(CLIENT_THREADS)]
    for thread in threads:
        thread.start()
    start = time.monotonic() + 0.2
    count = int(rate * seconds)
    for n in range(count):
        due_times.put((start + n / rate, keys[n % len(keys)]))
    for _ in threads:
        due_times.put(None)
    for thread in threads:
        thread.join()
    return latencies, errors


def count_results() -> int:
    with psycopg.connect(f"{SERVER_URL}/{DB_NAME}") as connection:
        return connection.execute(
            "SELECT count(*) FROM projects_pollresult"
        ).fetchone()[0]


# Reporting -------------------------------------------------------------------


def make_report(
    args, latencies: list[float], errors: dict, elapsed: float, stored: int
) -> str:
    ordered = sorted(latencies)
    row = {
        "rate wanted": f"{args.rate:g}/s",
        "answered/s": f"{len(ordered) / elapsed:.0f}",
        "pings": f"{len(ordered):,}",
        "errors": ", ".join(f"{k}: {v}" for k, v in errors.items()) or "0",
        "p50 ms": percentile_ms(ordered, 0.50),
        "p90 ms": percentile_ms(ordered, 0.90),
        "p99 ms": percentile_ms(ordered, 0.99),
        "max ms": round(ordered[-1] * 1000, 1),
        "results stored (warm-up too)": f"{stored:,}",
    }
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    command = "bench/bench_pings.py " + " ".join(sys.argv[1:])
    return (
        f"### Ping endpoint, {args.rate:g} pings/s for {args.duration:g} s "
        f"({datetime.now(UTC):%Y-%m-%d})\n\n"
        f"`{procfile_web()}` from the Procfile with WEB_CONCURRENCY={args.workers}"
        f"{f' and --threads {args.threads}' if args.threads else ''}, "
        f"PostgreSQL, {args.projects:,} heartbeat projects, commit {commit}, "
        f"`{command.strip()}`.\n\n{markdown_table([row])}\n"
    )


if __name__ == "__main__":
    main()
