"""Slow clients cannot block the site: gunicorn, started exactly as the
Procfile's web line says, keeps answering pings while many connections
send their headers a byte at a time and never finish, and others connect
and send nothing; and keeps answering pages while more connections than
it has threads trickle a request body.

The ping latencies measured while the slow connections are held are
written to test-artifacts/slow_clients.json; no timing is asserted, only
that every ping is answered within the test's generous timeout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.processes import ROOT, process_env
from tests.support.server_sockets import requests_read
from tests.support.waiting import wait_until
from tests.support.web_process import free_port, procfile_web_command

SLOW_CONNECTIONS = 16
IDLE_CONNECTIONS = 16
PINGS = 30
PING_TIMEOUT = 60.0
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class SlowClients:
    """Connections that trickle a header a byte every half second and
    never end it, reopened whenever the server closes one; and idle ones."""

    def __init__(self, port: int, opening: bytes = b"") -> None:
        self.port = port
        # What each sends before its byte every half second: by default the
        # start of a request's headers.
        self.opening = opening or b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        self.stop = threading.Event()
        self.reopened = 0
        self.threads = [
            threading.Thread(target=self._trickle, daemon=True)
            for _ in range(SLOW_CONNECTIONS)
        ]
        self.idle: list[socket.socket] = []

    def start(self) -> None:
        for thread in self.threads:
            thread.start()
        for _ in range(IDLE_CONNECTIONS):
            self.idle.append(socket.create_connection(("127.0.0.1", self.port)))

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)
        for sock in self.idle:
            sock.close()

    def _trickle(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port)) as sock:
                    sock.sendall(self.opening)
                    while not self.stop.wait(0.5):
                        sock.sendall(b"X")
            except OSError:
                self.reopened += 1


@pytest.fixture
def heartbeat(make_project):
    return make_project(kind="heartbeat", url="", interval=1, interval_unit="hours")


@pytest.fixture
def web_settings() -> dict[str, str]:
    return {}


@pytest.fixture
def web(heartbeat, web_settings):
    port = free_port()
    bin_dir = str(Path(sys.executable).parent)
    env = process_env(
        PORT=str(port),
        HTTPS="false",
        PATH=f"{bin_dir}:{os.environ.get('PATH', '')}",
        **web_settings,
    )
    process = subprocess.Popen(
        ["/bin/sh", "-c", f"exec {procfile_web_command()}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/ping/{heartbeat.ping_key}"
    try:
        wait_until(lambda: _answers(url), timeout=60)
        yield url, port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_the_procfile_runs_event_loop_workers():
    command = procfile_web_command()

    assert re.search(r"--worker-class[ =]uvicorn_worker.UvicornWorker", command)
    assert re.search(r"monitor\.asgi\b", command)
    assert re.search(r"--timeout[ =]", command)


def test_pings_are_answered_while_slow_clients_hold_connections(web):
    url, port = web
    attackers = SlowClients(port)
    attackers.start()
    latencies = []
    try:
        time.sleep(1)  # let every slow connection reach a worker first
        for _ in range(PINGS):
            started = time.monotonic()
            response = httpx.get(url, timeout=PING_TIMEOUT)
            latencies.append(time.monotonic() - started)
            assert response.status_code == 200
    finally:
        attackers.close()

    report = {
        "procfile_web": procfile_web_command(),
        "slow_connections": SLOW_CONNECTIONS,
        "idle_connections": IDLE_CONNECTIONS,
        "slow_connections_reopened": attackers.reopened,
        "pings": len(latencies),
        "latency_ms": {
            "median": round(statistics.median(latencies) * 1000, 1),
            "max": round(max(latencies) * 1000, 1),
            "all": [round(s * 1000, 1) for s in latencies],
        },
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "slow_clients.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report))
    assert len(latencies) == PINGS


@pytest.mark.parametrize(
    "web_settings", [{"WEB_CONCURRENCY": "1", "WEB_THREADS": "2"}], indirect=False
)
def test_pages_are_answered_while_slow_bodies_hold_connections(web):
    _, port = web
    # Headers whole, then a body a byte every half second, never finished:
    # twice as many as the worker has threads for pages.
    slow_body = (
        b"POST /api/v1/projects/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    )
    attackers = SlowClients(port, opening=slow_body)
    attackers.start()
    try:
        wait_until(lambda: requests_read(port) >= SLOW_CONNECTIONS)
        for _ in range(5):
            page = httpx.get(f"http://127.0.0.1:{port}/", timeout=PING_TIMEOUT)
            assert page.status_code == 302  # the overview sends you to sign in
    finally:
        attackers.close()
