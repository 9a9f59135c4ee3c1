"""What the API changes reaches a real running poller, as an admin save
does: the post_save/post_delete signals call its control endpoint after
the commit."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from polling.client import ControlClient
from projects.models import PollerNode
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def poller(tmp_path, settings):
    """A real runpoller on the test database, once it has registered its
    control URL; yields a ControlClient for it."""
    log = (tmp_path / "runpoller.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runpoller"],
        cwd=ROOT,
        env=process_env(
            POLLER_CONTROL_BIND="127.0.0.1:0",
            POLLER_CONTROL_TOKEN=settings.POLLER_CONTROL_TOKEN,
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until(
            lambda: PollerNode.objects.exclude(control_url="").exists(), timeout=30
        )
        url = PollerNode.objects.exclude(control_url="").get().control_url
        yield ControlClient(base_url=url)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        finally:
            process.kill()
            log.close()


def active_projects(control: ControlClient) -> int:
    status = control.status()
    return -1 if status is None else status.active_projects


def test_create_pause_resume_and_delete_reach_the_running_poller(
    write_api, poller, target_server
):
    created = write_api.post(
        "/api/v1/projects/",
        {
            "name": "via api",
            "url": target_server.url("/ok"),
            "interval": 10,
            "interval_unit": "seconds",
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    project = f"/api/v1/projects/{created.json()['id']}/"

    # Polled at once, not at the next periodic reload (300 s away).
    wait_until(lambda: target_server.count("/ok") >= 1, timeout=5)
    assert active_projects(poller) == 1

    assert write_api.post(f"{project}pause/").status_code == 200
    wait_until(lambda: active_projects(poller) == 0, timeout=5)

    polls_before = target_server.count("/ok")
    assert write_api.post(f"{project}resume/").status_code == 200
    wait_until(lambda: target_server.count("/ok") > polls_before, timeout=5)
    assert active_projects(poller) == 1

    changed = write_api.patch(
        project, {"url": target_server.url("/status/204"), "expected_status": "204"}
    )
    assert changed.status_code == 200, changed.json()
    wait_until(lambda: target_server.count("/status/204") >= 1, timeout=5)

    assert write_api.delete(project).status_code == 204
    wait_until(lambda: active_projects(poller) == 0, timeout=5)
