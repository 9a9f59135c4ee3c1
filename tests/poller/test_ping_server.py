"""The ping path end to end, in the web process the Procfile starts: a
ping answered 200 is in the database when the answer arrives; an
overloaded endpoint answers 503 with Retry-After and stores nothing it
refused; SIGTERM during a burst stores every ping the server accepted and
answers it before the workers exit."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from django.db import connection

from projects.models import PollResult
from tests.support.processes import ROOT, process_env
from tests.support.server_sockets import requests_read
from tests.support.waiting import wait_until
from tests.support.web_process import free_port, procfile_web_command
from tests.support.writes_blocked import results_blocked

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def heartbeats(make_project):
    return [
        make_project(kind="heartbeat", url="", interval=1, interval_unit="hours")
        for _ in range(12)
    ]


class Web:
    """The Procfile's web line on a free port of 127.0.0.1."""

    def __init__(self, **settings: str) -> None:
        self.port = free_port()
        bin_dir = str(Path(sys.executable).parent)
        env = process_env(
            PORT=str(self.port),
            HTTPS="false",
            PATH=f"{bin_dir}:{os.environ.get('PATH', '')}",
            **settings,
        )
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {procfile_web_command()}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._answers, timeout=60)

    def url(self, project) -> str:
        return f"http://127.0.0.1:{self.port}/ping/{project.ping_key}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def _answers(self) -> bool:
        try:
            return httpx.head(self.url_of_nothing(), timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def url_of_nothing(self) -> str:
        return f"http://127.0.0.1:{self.port}/ping/00000000-0000-0000-0000-000000000000"


@pytest.fixture
def start_web():
    started = []

    def start(**settings: str) -> Web:
        started.append(Web(**settings))
        return started[-1]

    yield start
    for web in started:
        web.stop()


class Answer:
    """A ping sent on a connection of its own, on a thread of its own:
    `sent` once the whole request is out, then the answer's status and
    headers (plain sockets: the test knows when the request left)."""

    def __init__(self, port: int, project) -> None:
        self.port, self.project = port, project
        self.sent = threading.Event()
        self.status = 0
        self.headers: dict[str, str] = {}
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        request = (
            f"POST /ping/{self.project.ping_key} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Length: 1\r\nConnection: close\r\n\r\nx"
        ).encode()
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            sock.sendall(request)
            self.sent.set()
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head = answer.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
        self.status = int(head[0].split()[1])
        self.headers = {
            k.lower(): v for k, _, v in (h.partition(": ") for h in head[1:])
        }


def ping_all(web: Web, projects) -> list[Answer]:
    """One ping per project, all at once."""
    return [Answer(web.port, project) for project in projects]


def stored_projects() -> set[int]:
    return set(PollResult.objects.values_list("project_id", flat=True))


def test_a_ping_answered_200_is_stored_when_the_answer_arrives(start_web, heartbeats):
    web = start_web()
    missing = []

    def ping_and_look(project) -> None:
        try:
            with httpx.Client(timeout=60) as client:
                for n in range(10):
                    response = client.post(web.url(project), content=f"{n}".encode())
                    assert response.status_code == 200
                    if not PollResult.objects.filter(
                        project=project, error_message=f"{n}"
                    ).exists():
                        missing.append((project.pk, n))
        finally:
            connection.close()

    threads = [threading.Thread(target=ping_and_look, args=(p,)) for p in heartbeats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert missing == []
    assert PollResult.objects.count() == 120


def test_an_overloaded_endpoint_answers_503_and_stores_only_what_it_accepted(
    start_web, heartbeats
):
    # One worker whose writer holds at most 2 pings waiting, and a batch of
    # at most those: of 12 pings sent while it cannot commit, 8 or more are
    # refused.
    web = start_web(WEB_CONCURRENCY="1", PING_QUEUE_SIZE="2")
    with results_blocked():
        answers = ping_all(web, heartbeats)
        refused = lambda: [a for a in answers if a.status == 503]  # noqa: E731
        wait_until(lambda: len(refused()) >= 8, timeout=30)
    for answer in answers:
        answer.thread.join()

    assert {a.status for a in answers} == {200, 503}
    assert all(a.headers["retry-after"].isdigit() for a in refused())
    answered_200 = {a.project.pk for a in answers if a.status == 200}
    assert stored_projects() == answered_200
    assert PollResult.objects.count() == len(answered_200)


def test_sigterm_during_a_burst_stores_and_answers_every_accepted_ping(
    start_web, heartbeats
):
    web = start_web()
    with results_blocked():
        answers = ping_all(web, heartbeats)
        # Every request sent and read by a worker, which hands it to its
        # writer, whose batch cannot commit: then the workers are told to stop.
        wait_until(lambda: all(a.sent.is_set() for a in answers), timeout=30)
        wait_until(lambda: requests_read(web.port) >= len(heartbeats), timeout=30)
        web.process.send_signal(signal.SIGTERM)
    for answer in answers:
        answer.thread.join()
    web.process.wait(timeout=60)

    assert web.process.returncode == 0
    assert [a.status for a in answers] == [200] * len(heartbeats)
    assert stored_projects() == {p.pk for p in heartbeats}
