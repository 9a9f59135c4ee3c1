"""WebSocket checks against a real server (the websockets package), alone
and on the executor's loop: the upgrade, a message and its reply, the
close handshake, and each failure's reason as a person reads it."""

from __future__ import annotations

import ssl
from datetime import UTC, datetime

from polling.engine.types import Target, Task
from tests.support.executor_probe import run_poll
from tests.support.silent_server import SilentServer
from tests.support.waiting import wait_until
from tests.support.websocket_server import WebSocketServer


def poll(handle, url: str, *, timeout: float = 5):
    task = Task(
        target=Target(project_id=1, url=url, timeout_seconds=timeout),
        due_at=datetime.now(UTC),
    )
    return run_poll(handle, task)


def test_the_upgrade_alone_is_up_and_closes_politely(handle):
    with WebSocketServer() as server:
        outcome = poll(handle, f"ws://127.0.0.1:{server.port}/live")
        wait_until(lambda: server.closed_politely == 1)

    assert outcome.error == ""
    assert outcome.status_code == 101


def test_a_reply_with_the_expected_text_is_up(handle):
    with WebSocketServer() as server:
        url = f"ws://127.0.0.1:{server.port}/live?send=ping&expect=echo:%20ping"
        outcome = poll(handle, url)
        wait_until(lambda: server.closed_politely == 1)

    assert outcome.error == ""
    assert outcome.message == "echo: ping"


def test_a_reply_without_the_expected_text_times_out(handle):
    with WebSocketServer() as server:
        url = f"ws://127.0.0.1:{server.port}/?send=ping&expect=pong"
        outcome = poll(handle, url, timeout=1)

    assert outcome.error == "timed out after 1 s waiting for a reply"


def test_a_server_that_never_replies_times_out(handle):
    with WebSocketServer(silent=True) as server:
        outcome = poll(handle, f"ws://127.0.0.1:{server.port}/?send=ping", timeout=1)

    assert outcome.error == "timed out after 1 s waiting for a reply"


def test_a_server_that_refuses_the_upgrade_is_down(handle, target_server):
    url = target_server.url("/ok").replace("http://", "ws://")

    outcome = poll(handle, url)

    assert outcome.error == (
        "WebSocket upgrade refused: the server answered 200, not 101"
    )


def test_a_server_that_accepts_and_never_speaks_times_out(handle):
    with SilentServer() as silent:
        outcome = poll(handle, f"ws://127.0.0.1:{silent.port}/", timeout=1)

    assert outcome.error == "timed out after 1 s"


def test_wss_verifies_the_certificate_and_reads_its_expiry(handle, tls_ca):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1").configure_cert(context)
    with WebSocketServer(tls=context) as server:
        outcome = poll(handle, f"wss://127.0.0.1:{server.port}/?send=hi&expect=hi")

    assert outcome.error == ""
    assert outcome.tls_expires_at is not None
