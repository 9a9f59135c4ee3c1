from __future__ import annotations

import socket
import time

import httpx
import pytest

from polling import control
from projects.models import PollResult, Project
from tests.support.factories import quick_projects
from tests.support.waiting import wait_until

TOKEN = "tests-only-control-token"


@pytest.fixture
def api(running_poller):
    with httpx.Client(
        base_url=running_poller.url,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=5,
    ) as client:
        yield client


def make_project(server, *, path: str = "/ok", interval: int = 1) -> Project:
    [project] = quick_projects(server, 1, path=path, interval=interval, timeout=1)
    return project


def raw_request(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_status_returns_the_coordinators_status(api):
    response = api.get("/status")
    assert response.status_code == 200
    assert response.json()["state"] == "running"
    assert response.json()["max_concurrent_http"] == 100


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong", f"Basic {TOKEN}", "Bearer", f"bearer {TOKEN}x"],
)
def test_it_refuses_a_missing_or_wrong_token(running_poller, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    response = httpx.get(running_poller.url + "/status", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "missing or wrong bearer token"}
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_unknown_routes_are_404_and_wrong_methods_405(api):
    missing = api.get("/nope")
    assert (missing.status_code, missing.json()) == (
        404,
        {"error": "no such endpoint: /nope"},
    )
    wrong = api.post("/status")
    assert wrong.status_code == 405
    assert wrong.json() == {"error": "POST is not allowed here; use GET"}


def test_sync_adds_updates_and_removes_a_project(api, target_server, running_poller):
    project = make_project(target_server, interval=3600)
    assert api.post(f"/projects/{project.pk}/sync").json() == {
        "project_id": project.pk,
        "result": "added",
    }
    Project.objects.filter(pk=project.pk).update(url=target_server.url("/other"))
    assert api.post(f"/projects/{project.pk}/sync").json()["result"] == "updated"
    Project.objects.filter(pk=project.pk).update(enabled=False)
    assert api.post(f"/projects/{project.pk}/sync").json()["result"] == "removed"
    assert running_poller.coordinator.status().active_projects == 0


def test_sync_of_many_follows_each_project_in_one_call(api, target_server):
    added, disabled = (make_project(target_server, interval=3600) for _ in range(2))
    Project.objects.filter(pk=disabled.pk).update(enabled=False)
    response = api.post("/projects/sync", json={"ids": [added.pk, disabled.pk, 10**9]})
    assert response.json() == {
        "results": {
            str(added.pk): "added",
            str(disabled.pk): "absent",
            "1000000000": "absent",
        }
    }


@pytest.mark.parametrize("body", [b"[1]", b'{"ids": [1, "2"]}', b'{"ids": [0]}', b"{"])
def test_sync_of_many_rejects_a_bad_list(api, body):
    response = api.post("/projects/sync", content=body)
    assert response.status_code == 400
    assert "ids" in response.json()["error"] or "JSON" in response.json()["error"]


def test_delete_stops_polling_a_project(api, target_server, running_poller):
    project = make_project(target_server, interval=3600)
    api.post(f"/projects/{project.pk}/sync")
    assert api.delete(f"/projects/{project.pk}").json() == {
        "project_id": project.pk,
        "removed": True,
    }
    assert running_poller.coordinator.status().active_projects == 0


def test_reload_reads_the_database(api, target_server):
    make_project(target_server, interval=3600)
    make_project(target_server, interval=3600)
    assert api.post("/reload").json() == {"added": 2, "updated": 0, "removed": 0}


def test_scale_changes_the_limit(api, running_poller):
    response = api.post("/scale", json={"max_concurrent_http": 7})
    assert response.json() == {"max_concurrent_http": 7}
    assert running_poller.coordinator.status().max_concurrent_http == 7


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the body must be JSON"),
        (b'{"max_concurrent_http": 0}', "from 1 to 5000"),
        (b'{"max_concurrent_http": 5001}', "from 1 to 5000"),
        (b'{"max_concurrent_http": "10"}', "from 1 to 5000"),
        (b'{"max_concurrent_http": true}', "from 1 to 5000"),
        (b"[10]", "from 1 to 5000"),
        (b"", "the body must be JSON"),
    ],
)
def test_scale_rejects_bad_input(api, running_poller, body, message):
    response = api.post("/scale", content=body)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert running_poller.coordinator.status().max_concurrent_http == 100


def test_an_oversized_body_is_413(api):
    response = api.post("/scale", content=b"x" * (control.MAX_BODY_BYTES + 1))
    assert response.status_code == 413
    assert "at most" in response.json()["error"]


def test_metrics_speak_prometheus(api, target_server):
    project = make_project(target_server, path="/status/500")
    api.post(f"/projects/{project.pk}/sync")
    wait_until(lambda: running_polls(api) >= 1, timeout=5)
    response = api.get("/metrics")
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'poller_polls_total{outcome="down",region="default"}' in text
    assert "poller_results_rejected_total 0.0" in text
    up = f'poller_project_up{{project_id="{project.pk}",region="default"}} 0.0'
    assert up in text
    for name in (
        "poller_poll_duration_seconds_bucket",
        "poller_scheduling_lag_seconds_bucket",
        "poller_polls_in_flight",
        "poller_task_queue_depth",
        "poller_result_queue_depth",
        "poller_results_pending_write",
    ):
        assert name in text


def running_polls(api) -> int:
    return api.get("/status").json()["polls_total"]


def test_malformed_requests_get_a_json_error(running_poller):
    reply = raw_request(running_poller.control.port, b"\x16\x03\x01garbage\r\n\r\n")
    assert b'"error"' in reply
    too_many_headers = b"GET /status HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n"
    reply = raw_request(running_poller.control.port, too_many_headers)
    assert reply.startswith(b"HTTP/1.0 431")
    assert b'"error"' in reply


def test_a_silent_client_is_cut_off(running_poller, monkeypatch):
    monkeypatch.setattr(control._Handler, "timeout", 0.3)
    with socket.create_connection(("127.0.0.1", running_poller.control.port)) as sock:
        sock.settimeout(3)
        started = time.monotonic()
        assert sock.recv(1024) == b""  # the server closed the connection
        assert time.monotonic() - started < 2


MALFORMED = [
    b"\x00\xff" * 50 + b"\r\n\r\n",
    b"GET\r\n\r\n",
    b"POST /scale HTTP/1.0\r\nContent-Length: x\r\n\r\n",
    b"GET /status HTTP/1.0\r\nAuthorization: Bearer nope\r\n\r\n",
    b"POST /scale HTTP/1.0\r\nAuthorization: Bearer "
    + TOKEN.encode()
    + b"\r\nContent-Length: 5\r\n\r\n{{{{{",
]


@pytest.mark.slow
def test_a_thousand_malformed_requests_do_not_disturb_polling(
    running_poller, target_server
):
    project = make_project(target_server, interval=1)
    running_poller.coordinator.sync_project(project.pk)
    wait_until(lambda: PollResult.objects.exists())
    before = PollResult.objects.count()
    started = time.monotonic()
    port = running_poller.control.port
    for i in range(1000):
        raw_request(port, MALFORMED[i % len(MALFORMED)])
    elapsed = time.monotonic() - started
    # One poll a second went on throughout.
    wait_until(lambda: PollResult.objects.count() - before >= int(elapsed))
    status = running_poller.coordinator.status()
    assert status.skipped_late == 0
    assert status.lag_p99_ms < 500


def test_idle_connections_cannot_lock_the_endpoint_out(
    running_poller, api, monkeypatch
):
    # Long enough that no idle connection times out during the test: what
    # lets the request in is that it cuts off an idle one.
    monkeypatch.setattr(control._Handler, "timeout", 60)
    port = running_poller.control.port
    idle = [
        socket.create_connection(("127.0.0.1", port))
        for _ in range(control.MAX_CONCURRENT_REQUESTS + 4)
    ]
    try:
        response = api.get("/status")
    finally:
        for sock in idle:
            sock.close()

    assert response.status_code == 200
    assert response.json()["state"] == "running"


def test_a_client_that_drips_its_request_is_cut_off(running_poller, monkeypatch):
    # Each byte comes well within the timeout; the whole request does not.
    monkeypatch.setattr(control._Handler, "timeout", 0.5)
    request = b"GET /status HTTP/1.0\r\n" + b"X-Slow: " + b"y" * 100
    with socket.create_connection(("127.0.0.1", running_poller.control.port)) as sock:
        sock.settimeout(0.1)
        sent = 0
        for byte in request:
            try:
                sock.sendall(bytes([byte]))
                if sock.recv(1024) == b"":
                    break  # the server closed the connection
            except TimeoutError:
                sent += 1  # nothing yet: it is still listening
            except OSError:
                break  # reset by the server
    # 100+ bytes at 0.1 s each would take 10 s; it was cut off after 0.5 s.
    assert sent < len(request) // 2


@pytest.mark.parametrize("digits", ["9" * 5000, str(2**63), "1" + "0" * 20])
def test_a_project_id_too_large_for_any_project_is_400(api, digits):
    for method, path in [
        ("POST", f"/projects/{digits}/sync"),
        ("DELETE", f"/projects/{digits}"),
    ]:
        response = api.request(method, path)

        assert response.status_code == 400
        assert response.json() == {"error": "no project has so large an id"}


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::", "poller.internal"])
def test_a_short_token_is_refused_beyond_loopback(host):
    with pytest.raises(control.WeakControlToken, match="at least 32"):
        control.check_token(host, "x" * 31)
    control.check_token(host, "x" * 32)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_any_token_will_do_on_loopback(host):
    control.check_token(host, "short")


def test_the_control_server_refuses_to_start_beyond_loopback_with_a_short_token(
    running_poller,
):
    server = control.ControlServer(
        running_poller.coordinator, host="0.0.0.0", port=0, token="too-short"
    )

    with pytest.raises(control.WeakControlToken):
        server.start()
    server.stop()  # nothing was bound
