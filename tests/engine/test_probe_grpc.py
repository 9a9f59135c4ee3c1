"""gRPC health checks against a real server with the standard health
service, switching between SERVING and NOT_SERVING; each failure's reason
as a person reads it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from polling.engine.blocked import parse_networks
from polling.engine.probe import needs_side_pool, side_check
from polling.engine.types import Target, Task
from tests.support.certificates import write_self_signed
from tests.support.grpc_health_server import (
    NOT_SERVING,
    SERVING,
    UNKNOWN,
    HealthServer,
)
from tests.support.silent_server import SilentServer


def check(url: str, *, timeout: float = 5, networks=()):
    task = Task(
        target=Target(project_id=1, url=url, timeout_seconds=timeout),
        due_at=datetime.now(UTC),
    )
    return side_check(task, blocked_networks=parse_networks(networks))


@pytest.fixture
def server():
    with HealthServer() as running:
        yield running


def test_a_service_switching_between_serving_and_not_serving(server):
    url = f"grpc://127.0.0.1:{server.port}/shop.Cart"

    server.set("shop.Cart", SERVING)
    up = check(url)
    server.set("shop.Cart", NOT_SERVING)
    down = check(url)
    server.set("shop.Cart", SERVING)
    back = check(url)

    assert (up.up, up.error, up.message) == (True, "", "SERVING")
    assert (down.up, down.error) == (False, "gRPC health: NOT_SERVING")
    assert back.up
    assert up.first_byte_ms is not None


def test_the_server_as_a_whole_is_the_empty_service(server):
    server.set("", SERVING)

    assert check(f"grpc://127.0.0.1:{server.port}").up
    assert check(f"grpc://127.0.0.1:{server.port}/").up


def test_an_unknown_status_is_down(server):
    server.set("shop.Cart", UNKNOWN)

    outcome = check(f"grpc://127.0.0.1:{server.port}/shop.Cart")

    assert outcome.error == "gRPC health: UNKNOWN"


def test_a_service_the_server_does_not_know_is_down(server):
    outcome = check(f"grpc://127.0.0.1:{server.port}/shop.Nothing")

    assert outcome.error == (
        "gRPC health: SERVICE_UNKNOWN (the server does not know “shop.Nothing”)"
    )


def test_a_server_without_the_health_service_says_so():
    with HealthServer(with_health=False) as bare:
        outcome = check(f"grpc://127.0.0.1:{bare.port}/")

    assert outcome.error == (
        "gRPC health: the server has no health service (UNIMPLEMENTED)"
    )


def test_a_server_that_accepts_and_never_speaks_times_out():
    with SilentServer() as silent:
        outcome = check(f"grpc://127.0.0.1:{silent.port}/", timeout=1)

    assert outcome.error == "timed out after 1 s"


def test_a_closed_port_is_refused():
    assert check("grpc://127.0.0.1:1/").error == "connection refused"


def test_tls_to_a_server_without_tls_is_a_tls_error(server):
    server.set("", SERVING)

    outcome = check(f"grpcs://127.0.0.1:{server.port}/", timeout=2)

    assert outcome.error == "TLS error: wrong version number"


def test_a_self_signed_certificate_fails_verification(tmp_path):
    pem = write_self_signed(tmp_path / "server.pem").read_bytes()
    with HealthServer(pem=pem) as tls_server:
        tls_server.set("", SERVING)
        outcome = check(f"grpcs://127.0.0.1:{tls_server.port}/")

    assert outcome.error == "TLS certificate verify failed: self signed certificate"


def test_an_untrusted_team_never_reaches_a_blocked_network():
    with SilentServer() as silent:
        url = f"grpc://127.0.0.1:{silent.port}/"
        outcome = check(url, networks=["127.0.0.0/8"])

        assert outcome.error == (
            "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"
        )
        assert silent.accepted == 0


def test_grpc_checks_go_to_the_side_pool():
    task = Task(
        target=Target(project_id=1, url="grpcs://api.example.com:443/x"),
        due_at=datetime.now(UTC),
    )
    assert needs_side_pool(task)
