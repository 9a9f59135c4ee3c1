"""Benchmark: what a bare request costs the web process under each worker
class the Procfile could run, the numbers behind its choice
(docs/installation.md#the-web-process).

Each server runs a hello-world application (WSGI for gunicorn's threaded
worker, ASGI for uvicorn's) with 2 workers on 127.0.0.1; wrk keeps 64
connections busy for --duration seconds; the CPU the server's processes
used is read from /proc.

    .venv/bin/python bench/web_servers.py --duration 10 --publish
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from harness import (
    free_port,
    machine,
    markdown_table,
    process_cpu_seconds,
    process_tree,
)
from ping_load import parse_wrk
from run_logs import publish_run

APPS = textwrap.dedent(
    """
    def wsgi(environ, start_response):
        headers = [("Content-Type", "text/plain"), ("Content-Length", "3")]
        start_response("200 OK", headers)
        return [b"OK\\n"]

    async def asgi(scope, receive, send):
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/plain"), (b"content-length", b"3")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"OK\\n"})
    """
)
SERVERS = {
    "gunicorn gthread, 16 threads": [
        "hello:wsgi",
        "--worker-class",
        "gthread",
        "--threads",
        "16",
    ],
    "gunicorn + uvicorn worker": [
        "hello:asgi",
        "--worker-class",
        "uvicorn_worker.UvicornWorker",
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "hello.py").write_text(APPS)
        for name, options in SERVERS.items():
            rows.append({"server": name, **measure(folder, options, args.duration)})
    report = (
        f"### Web workers, a bare request ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n"
        f"2 workers each, wrk with 64 connections for {args.duration:g} s; "
        f"{machine()}; load average {os.getloadavg()[0]:.1f} after.\n\n"
        f"{markdown_table(rows)}\n"
    )
    print(report)
    if args.publish:
        print(f"Published: {publish_run('web-servers', report)}")


def measure(folder: str, options: list[str], seconds: float) -> dict:
    port = free_port()
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    command = [gunicorn, *options, "--workers", "2", "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, cwd=folder, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_ready(url)
        before = sum(process_cpu_seconds(pid) for pid in process_tree(server.pid))
        output = subprocess.run(
            ["wrk", "-t2", "-c64", f"-d{seconds:g}s", "--latency", url],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        after = sum(process_cpu_seconds(pid) for pid in process_tree(server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)
    result = parse_wrk(output, 64, seconds)
    return {
        "requests/s": f"{result.per_second:,.0f}",
        "p99 ms": result.percentiles_ms.get("99"),
        "server CPU µs a request": f"{(after - before) / result.requests * 1e6:,.0f}",
    }


def wait_ready(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within 30 s")


if __name__ == "__main__":
    main()
