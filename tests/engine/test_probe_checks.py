"""What counts as up, against real servers on 127.0.0.1: status ranges,
keywords, JSON assertions, slow responses, redirects, certificate
verification and TCP ports."""

from __future__ import annotations

import json
import socket
import ssl
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest

from polling.engine.types import JsonAssertion, Keyword, Outcome, Target, Task
from tests.support.certificates import write_self_signed
from tests.support.executor_probe import open_handle, run_poll
from tests.support.target_server import TargetServer


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


def poll(handle, url: str, **fields) -> Outcome:
    return run_poll(
        handle, Task(Target(project_id=7, url=url, **fields), datetime.now(UTC))
    )


def text_url(server: TargetServer, body: str, **query) -> str:
    return server.url("/text?" + urlencode({"body": body, **query}))


def json_url(server: TargetServer, document: object) -> str:
    return text_url(server, json.dumps(document), type="application/json")


def test_a_status_in_the_expected_range_is_up(handle, target_server):
    two_xx = ((200, 299),)

    assert poll(handle, target_server.url("/status/204"), expected_status=two_xx).up

    outcome = poll(handle, target_server.url("/status/503"), expected_status=two_xx)
    assert outcome.up is False
    assert outcome.error == "expected 200-299, got 503"
    assert outcome.status_code == 503


def test_a_200_page_without_the_keyword_is_down(handle, target_server):
    url = text_url(target_server, "<h1>Maintenance</h1>", type="text/html")

    outcome = poll(handle, url, keyword=Keyword("Welcome"))

    assert outcome.up is False
    assert outcome.status_code == 200
    assert outcome.error == "keyword 'Welcome' not found"
    assert poll(handle, url, keyword=Keyword("maintenance")).up is True


def test_a_forbidden_keyword_on_the_page_is_down(handle, target_server):
    url = text_url(target_server, "Fatal error: database gone")

    outcome = poll(handle, url, keyword=Keyword("Error", present=False))

    assert outcome.up is False
    assert outcome.error == "forbidden keyword 'Error' found"
    strict = Keyword("Error", present=False, case_sensitive=True)
    assert poll(handle, url, keyword=strict).up is True


def test_the_keyword_is_read_in_the_servers_charset(handle, target_server):
    url = target_server.url("/text?") + urlencode(
        {"body": "Grüße", "type": "text/plain; charset=utf-8"}
    )

    assert poll(handle, url, keyword=Keyword("GRÜSSE")).up is True


def test_the_keyword_is_looked_for_in_the_first_mib_only(handle, target_server):
    outcome = poll(handle, target_server.url("/big/3000000"), keyword=Keyword("x"))

    assert outcome.up is False
    assert outcome.error == "keyword 'x' not found in the first 1 MiB"


def test_the_keyword_is_looked_for_in_the_final_page_after_redirects(
    handle, target_server
):
    final = text_url(target_server, "Welcome home")
    url = target_server.url("/redirect-to?" + urlencode({"location": final}))

    assert poll(handle, url, keyword=Keyword("Welcome")).up is True


def test_a_json_endpoint_answering_degraded_is_down(handle, target_server):
    url = json_url(target_server, {"status": "degraded", "db": "ok"})

    outcome = poll(handle, url, json_assertion=JsonAssertion("status", "==", "ok"))

    assert outcome.up is False
    assert outcome.status_code == 200
    assert outcome.error == 'JSON status: expected "ok", got "degraded"'


def test_a_json_endpoint_answering_ok_is_up(handle, target_server):
    url = json_url(target_server, {"status": "ok", "checks": {"queue": 3}})

    assert poll(handle, url, json_assertion=JsonAssertion("status", "==", "ok")).up
    below = JsonAssertion("checks.queue", "<", 10)
    assert poll(handle, url, json_assertion=below).up is True


def test_a_page_that_is_not_json_fails_the_json_assertion(handle, target_server):
    url = text_url(target_server, "<html>502 Bad Gateway</html>")

    outcome = poll(handle, url, json_assertion=JsonAssertion("status", "==", "ok"))

    assert outcome.up is False
    assert outcome.error == "body is not JSON"


def test_a_json_query_that_finds_nothing_is_down(handle, target_server):
    url = json_url(target_server, {"state": "ok"})

    outcome = poll(handle, url, json_assertion=JsonAssertion("status", "==", "ok"))

    assert outcome.error == "JSON query status found nothing"


def test_the_status_is_judged_before_the_content(handle, target_server):
    url = text_url(target_server, "Welcome", status="503")

    outcome = poll(handle, url, keyword=Keyword("Welcome"))

    assert outcome.error == "expected 200, got 503"


def test_a_response_slower_than_the_limit_is_down(handle, target_server):
    outcome = poll(handle, target_server.url("/delay/300"), max_response_time_ms=100)

    assert outcome.up is False
    assert outcome.status_code == 200
    assert outcome.error.startswith("slow: ")
    assert outcome.error.endswith(" ms > 100 ms")
    assert outcome.response_time_ms >= 300


def test_a_response_within_the_limit_is_up(handle, target_server):
    outcome = poll(handle, target_server.url("/ok"), max_response_time_ms=5000)

    assert outcome.up is True


def test_without_following_redirects_the_3xx_is_the_final_status(handle, target_server):
    url = target_server.url("/redirect/1")

    outcome = poll(handle, url, follow_redirects=False)

    assert outcome.up is False
    assert outcome.error == "expected 200, got 302"
    assert target_server.count("/redirect/0") == 0
    accepted = poll(handle, url, follow_redirects=False, expected_status=((300, 399),))
    assert accepted.up is True


@pytest.fixture
def self_signed_server(tmp_path):
    """An https server presenting a certificate signed by itself."""
    pem = write_self_signed(tmp_path / "self-signed.pem")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(pem))
    with TargetServer(ssl_context=context) as server:
        yield server


def test_a_self_signed_server_is_down_with_verification_on(handle, self_signed_server):
    outcome = poll(handle, self_signed_server.url("/ok"))

    assert outcome.up is False
    assert outcome.error == "TLS certificate verify failed: self-signed certificate"


def test_a_self_signed_server_is_up_with_verification_off(handle, self_signed_server):
    url = self_signed_server.url("/ok")

    outcome = poll(handle, url, verify_tls=False)

    assert outcome.up is True
    assert outcome.tls_expires_at is not None
    # A connection opened without verification is never reused with it on.
    assert poll(handle, url).up is False
    assert poll(handle, url, verify_tls=False).up is True


@pytest.fixture
def listening_port():
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


@pytest.fixture
def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


def test_an_open_tcp_port_is_up_and_the_connection_is_closed(handle, listening_port):
    port = listening_port.getsockname()[1]

    outcome = poll(handle, f"tcp://127.0.0.1:{port}")

    assert outcome.up is True
    assert outcome.error == ""
    assert outcome.status_code is None
    assert 0 <= outcome.response_time_ms < 1000
    assert outcome.connect_ms is not None
    listening_port.settimeout(5)
    accepted, _ = listening_port.accept()
    with accepted:
        accepted.settimeout(5)
        assert accepted.recv(1) == b""  # closed at once, nothing sent


def test_a_closed_tcp_port_is_down(handle, closed_port):
    outcome = poll(handle, f"tcp://127.0.0.1:{closed_port}")

    assert outcome.up is False
    assert outcome.error == "connection refused"
    assert outcome.response_time_ms is None


def test_a_tcp_check_names_a_host_it_cannot_resolve(handle):
    outcome = poll(handle, "tcp://no-such-host.invalid:5432", timeout_seconds=5)

    assert outcome.up is False
    assert outcome.error == "DNS lookup failed for no-such-host.invalid"


def test_a_target_whose_settings_cannot_be_read_fails_with_the_problem(
    handle, target_server
):
    outcome = poll(handle, target_server.url("/ok"), problem="invalid expected status")

    assert outcome.up is False
    assert outcome.error == "invalid expected status"
    assert target_server.count() == 0
