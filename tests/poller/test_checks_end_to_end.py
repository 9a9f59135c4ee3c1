"""The checks through the whole poller: project row, probe, stored result."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlencode

import pytest

from projects.models import PollResult
from tests.support.waiting import wait_until


@pytest.fixture
def poll_once(running_poller, make_project):
    """Save a project, let the running poller poll it, return the result."""

    def poll(**fields) -> PollResult:
        fields.setdefault("interval", 1)
        fields.setdefault("interval_unit", "hours")
        project = make_project(**fields)
        running_poller.coordinator.sync_project(project.pk)
        results = PollResult.objects.filter(project=project)
        wait_until(results.exists, timeout=5)
        return results.get()

    return poll


def test_a_page_without_the_keyword_is_stored_down_with_its_reason(
    poll_once, target_server
):
    url = target_server.url("/text?" + urlencode({"body": "<h1>Oops</h1>"}))

    result = poll_once(url=url, keyword="Welcome")

    assert (result.status, result.status_code) == ("down", 200)
    assert result.error_message == "keyword 'Welcome' not found"


def test_a_degraded_json_endpoint_is_stored_down(poll_once, target_server):
    body = json.dumps({"status": "degraded"})
    url = target_server.url("/text?" + urlencode({"body": body}))

    result = poll_once(url=url, json_query="status", json_expected="ok")

    assert result.status == "down"
    assert result.error_message == 'JSON status: expected "ok", got "degraded"'


def test_open_and_closed_tcp_ports_are_stored_up_and_down(poll_once):
    with socket.create_server(("127.0.0.1", 0)) as server:
        open_result = poll_once(url=f"tcp://127.0.0.1:{server.getsockname()[1]}")
        closed_port = socket.create_server(("127.0.0.1", 0))
        port = closed_port.getsockname()[1]
        closed_port.close()
        closed_result = poll_once(url=f"tcp://127.0.0.1:{port}")

    assert (open_result.status, open_result.error_message) == ("up", "")
    assert open_result.response_time_ms is not None
    assert (closed_result.status, closed_result.error_message) == (
        "down",
        "connection refused",
    )
