"""gRPC health checks against a real server (grpcio with the standard
health service), switching between SERVING and NOT_SERVING; each
failure's reason as a person reads it. The probe speaks gRPC through
libcurl on the executor's loop, alone and on the executor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from polling.engine.probe import needs_side_pool
from polling.engine.probes import grpc
from polling.engine.types import Target, Task
from tests.support.certificates import write_self_signed
from tests.support.executor_probe import open_handle, run_poll
from tests.support.grpc_health_server import (
    NOT_SERVING,
    SERVING,
    UNKNOWN,
    HealthServer,
)
from tests.support.silent_server import SilentServer
from tests.support.socket_servers import ResettingServer
from tests.support.target_server import TargetServer


@pytest.fixture
def poll(handle):
    def run(url: str, *, timeout: float = 5):
        task = Task(
            target=Target(project_id=1, url=url, timeout_seconds=timeout),
            due_at=datetime.now(UTC),
        )
        return run_poll(handle, task)

    return run


@pytest.fixture
def server():
    with HealthServer() as running:
        yield running


def test_a_service_switching_between_serving_and_not_serving(server, poll):
    url = f"grpc://127.0.0.1:{server.port}/shop.Cart"

    server.set("shop.Cart", SERVING)
    up = poll(url)
    server.set("shop.Cart", NOT_SERVING)
    down = poll(url)
    server.set("shop.Cart", SERVING)
    back = poll(url)

    assert (up.up, up.error, up.message) == (True, "", "SERVING")
    assert (down.up, down.error) == (False, "gRPC health: NOT_SERVING")
    assert back.up
    assert up.first_byte_ms is not None


def test_the_server_as_a_whole_is_the_empty_service(server, poll):
    server.set("", SERVING)

    assert poll(f"grpc://127.0.0.1:{server.port}").up
    assert poll(f"grpc://127.0.0.1:{server.port}/").up


def test_an_unknown_status_is_down(server, poll):
    server.set("shop.Cart", UNKNOWN)

    outcome = poll(f"grpc://127.0.0.1:{server.port}/shop.Cart")

    assert outcome.error == "gRPC health: UNKNOWN"


def test_a_service_the_server_does_not_know_is_down(server, poll):
    outcome = poll(f"grpc://127.0.0.1:{server.port}/shop.Nothing")

    assert outcome.error == (
        "gRPC health: SERVICE_UNKNOWN (the server does not know “shop.Nothing”)"
    )


def test_a_server_without_the_health_service_says_so(poll):
    with HealthServer(with_health=False) as bare:
        outcome = poll(f"grpc://127.0.0.1:{bare.port}/")

    assert outcome.error == (
        "gRPC health: the server has no health service (UNIMPLEMENTED)"
    )


def test_a_server_that_accepts_and_never_speaks_times_out(poll):
    with SilentServer() as silent:
        outcome = poll(f"grpc://127.0.0.1:{silent.port}/", timeout=1)

    assert outcome.error == "timed out after 1 s"


def test_a_closed_port_is_refused(poll):
    assert poll("grpc://127.0.0.1:1/").error == "connection refused"


def test_tls_to_a_server_without_tls_is_a_tls_error(server, poll):
    server.set("", SERVING)

    outcome = poll(f"grpcs://127.0.0.1:{server.port}/", timeout=2)

    assert outcome.error == "TLS error: wrong version number"


def test_a_self_signed_certificate_fails_verification(tmp_path, poll):
    pem = write_self_signed(tmp_path / "server.pem").read_bytes()
    with HealthServer(pem=pem) as tls_server:
        tls_server.set("", SERVING)
        outcome = poll(f"grpcs://127.0.0.1:{tls_server.port}/")

    assert outcome.error == "TLS certificate verify failed: self-signed certificate"


def test_an_untrusted_team_never_reaches_a_blocked_network(poll_mode):
    handle = open_handle(poll_mode, blocked_networks=["127.0.0.0/8"])
    with SilentServer() as silent:
        url = f"grpc://127.0.0.1:{silent.port}/"
        task = Task(
            target=Target(project_id=1, url=url, timeout_seconds=5),
            due_at=datetime.now(UTC),
        )
        outcome = run_poll(handle, task)

        assert outcome.error == (
            "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"
        )
        assert silent.accepted == 0
    if hasattr(handle, "close"):
        handle.close()


def test_a_verified_tls_server_is_up_with_its_certificate_read(tls_ca, poll):
    leaf = tls_ca.issue_cert("127.0.0.1")
    pem = b"".join(blob.bytes() for blob in leaf.cert_chain_pems)
    key = leaf.private_key_pem.bytes()
    with HealthServer(pem=(key, pem)) as tls_server:
        tls_server.set("", SERVING)
        outcome = poll(f"grpcs://127.0.0.1:{tls_server.port}/")

    assert (outcome.up, outcome.error, outcome.message) == (True, "", "SERVING")
    assert outcome.tls_expires_at is not None
    assert outcome.tls_ms is not None


def test_the_connection_is_kept_for_the_next_check(server, poll):
    server.set("", SERVING)
    url = f"grpc://127.0.0.1:{server.port}"

    first, second = poll(url), poll(url)

    assert first.connect_ms is not None
    assert (second.up, second.connect_ms) == (True, None)


def test_an_http_server_that_is_not_grpc_says_so(poll):
    with TargetServer() as plain:
        outcome = poll(f"grpc://127.0.0.1:{plain.port}/")

    assert not outcome.up
    assert outcome.error.startswith(("gRPC: ", "HTTP/2 error: ")), outcome.error


def test_a_server_that_breaks_off_the_call_says_gRPC_had_no_answer(poll):
    with ResettingServer() as server:
        outcome = poll(f"grpc://127.0.0.1:{server.port}/")

    assert not outcome.up
    assert outcome.error.startswith("gRPC: no health answer ("), outcome.error


@pytest.mark.parametrize(
    ("message", "status"),
    [
        (b"", 0),
        (b"\x08\x01", 1),
        (b"\x08\x02", 2),
        # An unknown field before the status is skipped.
        (b"\x12\x02hi\x08\x01", 1),
    ],
)
def test_the_answer_is_read_as_protobuf(message, status):
    assert grpc.health_check_response_status(message) == status


def test_a_request_names_its_service_as_protobuf():
    assert grpc.health_check_request("") == b""
    assert grpc.health_check_request("shop.Cart") == b"\x0a\x09shop.Cart"
    assert grpc.frame(b"\x08\x01") == b"\x00\x00\x00\x00\x02\x08\x01"


def test_grpc_checks_run_on_the_executor_not_the_side_pool():
    task = Task(
        target=Target(project_id=1, url="grpcs://api.example.com:443/x"),
        due_at=datetime.now(UTC),
    )
    assert not needs_side_pool(task)
