"""probe() against real servers on 127.0.0.1 (tests/support/target_server.py).

Phases, certificates, DNS and the environment are in test_probe_phases.py
and test_probe_network.py.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest

from polling.engine import verdict
from polling.engine.probe import USER_AGENT, make_handle
from polling.engine.types import JsonAssertion, Keyword, Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll
from tests.support.waiting import wait_until

# How long a probe may overrun its timeout before a test calls it unbounded.
MARGIN = 1.5
# Far past the 1 s timeouts below, and too big to read in one second.
TEN_GIB = 10 * 1024**3


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


def poll(handle, url: str, **fields) -> Outcome:
    return run_poll(handle, Task(Target(project_id=7, url=url, **fields), _now()))


def timed_poll(handle, url: str, **fields) -> tuple[Outcome, float]:
    start = time.monotonic()
    outcome = poll(handle, url, **fields)
    return outcome, time.monotonic() - start


def _now() -> datetime:
    return datetime.now(UTC)


def test_it_records_an_ok_response_as_up(handle, target_server):
    outcome = poll(handle, target_server.url("/ok"))

    assert outcome.up is True
    assert outcome.project_id == 7
    assert outcome.status_code == 200
    assert outcome.error == ""
    assert 0 <= outcome.response_time_ms < 1000


@pytest.mark.parametrize(
    ("code", "expected", "error"),
    [
        (204, 204, ""),
        (204, 200, "expected 200, got 204"),
        (304, 304, ""),
        (304, 200, "expected 200, got 304"),
        (404, 404, ""),
        (404, 200, "expected 200, got 404"),
        (500, 500, ""),
        (503, 200, "expected 200, got 503"),
    ],
)
def test_it_is_up_exactly_when_the_status_is_the_expected_one(
    handle, target_server, code, expected, error
):
    url = target_server.url(f"/status/{code}")

    outcome = poll(handle, url, expected_status=((expected, expected),))

    assert outcome.up is (error == "")
    assert outcome.error == error
    assert outcome.status_code == code
    assert outcome.response_time_ms is not None


def test_it_follows_redirects_to_the_final_status(handle, target_server):
    outcome = poll(handle, target_server.url("/redirect/3"))

    assert outcome.up is True
    assert outcome.status_code == 200
    assert target_server.count("/redirect/") == 4


def test_it_follows_at_most_five_redirects(handle, target_server):
    assert poll(handle, target_server.url("/redirect/5")).up is True

    outcome = poll(handle, target_server.url("/redirect/6"))

    assert outcome.up is False
    assert outcome.error == "too many redirects"
    assert outcome.status_code is None


def test_it_stops_a_redirect_loop(handle, target_server):
    outcome = poll(handle, target_server.url("/redirect-loop"))

    assert outcome.up is False
    assert outcome.error == "too many redirects"
    assert target_server.count("/redirect-loop") == 6


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ("ftp://files.invalid/x", "unsupported redirect target: ftp://files.invalid/x"),
        ("http://[::1", "invalid redirect location"),
    ],
)
def test_it_reports_a_redirect_it_cannot_follow(handle, target_server, location, error):
    outcome = poll(handle, target_server.url(f"/redirect-to?location={location}"))

    assert outcome.up is False
    assert outcome.error == error


def test_it_records_a_timeout_as_down(handle, target_server):
    outcome, seconds = timed_poll(
        handle, target_server.url("/delay/5000"), timeout_seconds=1
    )

    assert outcome.up is False
    assert outcome.error == "timed out after 1 s"
    assert outcome.status_code is None
    assert outcome.response_time_ms is None
    assert seconds < 1 + MARGIN


# The drips send a byte a second, so a timeout per read would never fire:
# only the whole-poll deadline stops these polls before the drip ends, ten
# seconds later.


def test_it_bounds_a_body_that_drips(handle, target_server):
    outcome, seconds = timed_poll(
        handle, target_server.url("/drip/10"), timeout_seconds=1.5
    )

    assert outcome.up is False
    assert outcome.error == "timed out after 1.5 s"
    assert outcome.status_code == 200
    assert outcome.response_time_ms is None
    assert seconds < 1.5 + MARGIN


def test_it_bounds_headers_that_drip(handle, target_server):
    outcome, seconds = timed_poll(
        handle, target_server.url("/drip-headers/10"), timeout_seconds=1.5
    )

    assert outcome.up is False
    assert outcome.error == "timed out after 1.5 s"
    assert outcome.status_code is None
    assert seconds < 1.5 + MARGIN


def test_it_bounds_a_drip_over_tls(tls_ca_bundle, tls_target_server):
    handle = make_handle(ca_bundle=tls_ca_bundle)
    outcome, seconds = timed_poll(
        handle, tls_target_server.url("/drip/10"), timeout_seconds=1.5
    )

    assert outcome.error == "timed out after 1.5 s"
    assert seconds < 1.5 + MARGIN


def test_each_poll_has_its_own_deadline(handle, target_server):
    # The drip reads its second byte after the other poll's one-second
    # deadline: a deadline shared between threads would cut it short.
    dripped = []
    thread = threading.Thread(
        target=lambda: dripped.append(
            poll(make_handle(), target_server.url("/drip/2"), timeout_seconds=5)
        )
    )
    thread.start()
    wait_until(lambda: target_server.count("/drip") == 1)

    hung = poll(handle, target_server.url("/hang"), timeout_seconds=1)
    thread.join()

    assert hung.error == "timed out after 1 s"
    assert dripped[0].up is True


def test_it_records_a_refused_connection(handle):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    outcome = poll(handle, f"http://127.0.0.1:{port}/")

    assert outcome.up is False
    assert outcome.error == "connection refused"
    assert outcome.status_code is None
    assert outcome.response_time_ms is None


def test_it_reads_at_most_a_mebibyte_of_a_huge_body(handle, target_server):
    # Reading all 10 GiB would take far longer than the timeout.
    outcome, seconds = timed_poll(
        handle, target_server.url(f"/big/{TEN_GIB}"), timeout_seconds=1
    )

    assert outcome.up is True
    assert outcome.status_code == 200
    assert seconds < 1


def test_it_reports_garbage_as_an_invalid_response(handle, target_server):
    outcome = poll(handle, target_server.url("/garbage"))

    assert outcome.up is False
    assert outcome.error == "invalid HTTP response"
    assert outcome.status_code is None


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/reset", "connection reset by peer"),
        ("/close", "server closed the connection without a response"),
    ],
)
def test_it_reports_a_connection_dropped_without_an_answer(
    handle, target_server, path, error
):
    outcome = poll(handle, target_server.url(path))

    assert outcome.up is False
    assert outcome.error == error


def test_it_sends_head_requests(handle, target_server):
    outcome = poll(handle, target_server.url("/ok"), method="HEAD")

    assert outcome.up is True
    assert target_server.requests[0].method == "HEAD"


def test_it_sends_the_method_headers_and_body_as_given(handle, target_server):
    headers = (("X-Token", "s3cret"), ("Content-Type", "application/json"))
    body = '{"greeting": "héllo"}'

    outcome = poll(
        handle, target_server.url("/echo"), method="POST", headers=headers, body=body
    )

    assert outcome.up is True
    [request] = target_server.requests
    assert request.method == "POST"
    assert request.path == "/echo"
    assert request.header("X-Token") == "s3cret"
    assert request.header("Content-Type") == "application/json"
    assert request.header("User-Agent") == USER_AGENT
    assert request.body == body.encode()


def test_it_sends_no_body_when_the_body_is_empty(handle, target_server):
    poll(handle, target_server.url("/echo"))

    [request] = target_server.requests
    assert request.body == b""
    assert request.header("Content-Length") is None


def test_it_rejects_an_untrusted_certificate(handle, tls_target_server):
    outcome = poll(handle, tls_target_server.url("/ok"))

    assert outcome.up is False
    assert outcome.error.startswith("TLS certificate verify failed: ")
    assert outcome.status_code is None


def test_it_polls_https_with_a_trusted_certificate(tls_ca_bundle, tls_target_server):
    outcome = poll(make_handle(ca_bundle=tls_ca_bundle), tls_target_server.url("/ok"))

    assert outcome.up is True


def test_it_reports_tls_spoken_to_a_plain_http_server(handle, target_server):
    url = target_server.url("/ok").replace("http://", "https://")

    outcome = poll(handle, url)

    assert outcome.up is False
    assert outcome.error.startswith("TLS error: ")


def test_it_names_the_host_when_dns_lookup_fails(handle):
    # .invalid never resolves (RFC 6761); the lookup fails in milliseconds.
    outcome, seconds = timed_poll(handle, "http://no-such-host.invalid/")

    assert outcome.up is False
    assert outcome.error == "DNS lookup failed for no-such-host.invalid"
    assert seconds < 5


@pytest.mark.parametrize("value", ["line\nbreak", "nön-ascii", "x\n" + "y" * 3000])
def test_it_reports_an_invalid_header_value_instead_of_raising(
    handle, target_server, value
):
    outcome = poll(handle, target_server.url("/ok"), headers=(("X-Bad", value),))

    assert outcome.up is False
    assert outcome.error.startswith("invalid request: ")
    assert len(outcome.error) <= 1000


def test_it_records_when_the_poll_started_and_how_long_it_took(handle, target_server):
    due_at = _now() - timedelta(seconds=2)
    before = _now()

    outcome = run_poll(
        handle, Task(Target(project_id=1, url=target_server.url("/delay/200")), due_at)
    )

    assert before <= outcome.started_at <= _now()
    assert outcome.due_at == due_at
    assert outcome.lag_seconds >= 2
    assert 200 <= outcome.response_time_ms < 1000


def test_threads_with_a_handle_each_poll_side_by_side(target_server):
    paths = ["/ok", "/status/503"] * 40
    handles = threading.local()

    def poll_on_this_thread(path: str) -> Outcome:
        if not hasattr(handles, "handle"):
            handles.handle = make_handle()
        return poll(handles.handle, target_server.url(path))

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(poll_on_this_thread, paths))

    assert [outcome.up for outcome in outcomes] == [path == "/ok" for path in paths]
    assert target_server.count() == 80


def test_it_logs_and_reports_an_unexpected_error(target_server, caplog):
    handle = make_handle()
    handle.close()  # libcurl refuses a closed handle
    url = f"http://user:pass-word@127.0.0.1:{target_server.port}/ok?token=t0ken"

    with caplog.at_level(logging.WARNING, logger="polling.engine.probe"):
        outcome = poll(handle, url)

    assert outcome.up is False
    assert outcome.error.startswith("unexpected error: error: ")
    assert caplog.records[0].exc_info is not None
    # The project by id: its URL may carry credentials.
    assert "project 7" in caplog.text
    assert "pass-word" not in caplog.text
    assert "t0ken" not in caplog.text


# Hostile targets: whatever the body, the poll ends in an outcome, soon ---------


def repeat_url(server, text: str, times: int, content_type: str) -> str:
    query = urlencode({"text": text, "times": times, "type": content_type})
    return server.url(f"/repeat?{query}")


@pytest.mark.parametrize(
    "charset",
    ["rot13", "base64", "hex", "zlib", "quoted-printable", "idna", "punycode"],
)
def test_a_charset_that_is_no_plain_text_encoding_is_read_as_utf8(
    handle, target_server, charset
):
    url = repeat_url(
        target_server, "all is well; ", 5000, f"text/plain; charset={charset}"
    )

    outcome = poll(handle, url, keyword=Keyword("all is well"))

    assert outcome.up is True
    assert outcome.error == ""


def test_json_nested_too_deeply_is_a_failed_poll(handle, target_server):
    url = repeat_url(target_server, "[", 100_000, "application/json")

    outcome = poll(handle, url, json_assertion=JsonAssertion("a", "==", 1))

    assert outcome.up is False
    assert outcome.status_code == 200
    assert outcome.error == "body is JSON nested too deeply to read"


def test_a_check_that_raises_is_a_failed_poll(handle, target_server, monkeypatch):
    # Whatever a check on a body runs into, the poll is stored and counted.
    def explode(*args, **kwargs):
        raise MemoryError("no room for this body")

    monkeypatch.setattr(verdict, "keyword_reason", explode)

    outcome = poll(handle, target_server.url("/ok"), keyword=Keyword("x"))

    assert outcome.up is False
    assert outcome.project_id == 7
    assert outcome.error == "unexpected error: MemoryError: no room for this body"
