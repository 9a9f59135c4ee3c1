"""The SSH and UDP checks against real servers on loopback, run both
ways a poll runs (alone and in the executor's epoll loop): what counts as
up, and each failure's reason as text."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from polling.engine.types import Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll
from tests.support.socket_servers import BannerServer, UdpServer, closed_udp_port


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


def poll(handle, url: str, **fields) -> Outcome:
    fields.setdefault("timeout_seconds", 2)
    return run_poll(
        handle, Task(Target(project_id=7, url=url, **fields), datetime.now(UTC))
    )


# SSH --------------------------------------------------------------------------


def test_an_ssh_server_is_up_and_its_banner_is_the_message(handle):
    with BannerServer() as server:
        outcome = poll(handle, f"ssh://127.0.0.1:{server.port}")
    assert (outcome.up, outcome.error) == (True, "")
    assert outcome.message == "SSH-2.0-OpenSSH_9.2p1 Debian"
    assert outcome.response_time_ms is not None


def test_lines_before_the_identification_line_are_skipped(handle):
    greeting = b"Welcome to the bastion\r\nSSH-2.0-dropbear_2022.83\r\n"
    with BannerServer(greeting) as server:
        outcome = poll(handle, f"ssh://127.0.0.1:{server.port}")
    assert outcome.message == "SSH-2.0-dropbear_2022.83"


def test_a_banner_without_the_expected_text_is_down(handle):
    with BannerServer() as server:
        outcome = poll(
            handle, f"ssh://127.0.0.1:{server.port}", expected_reply="OpenSSH_10"
        )
    assert not outcome.up
    assert outcome.error == (
        "banner 'SSH-2.0-OpenSSH_9.2p1 Debian' does not contain 'OpenSSH_10'"
    )


def test_a_banner_matching_the_expected_pattern_is_up(handle):
    with BannerServer() as server:
        outcome = poll(
            handle,
            f"ssh://127.0.0.1:{server.port}",
            expected_reply=r"OpenSSH_9\.\d",
            expected_reply_regex=True,
        )
    assert outcome.up


def test_a_server_that_is_not_ssh_is_down(handle):
    with BannerServer(b"220 mail.example.com ESMTP\r\n" * 400) as server:
        outcome = poll(handle, f"ssh://127.0.0.1:{server.port}")
    assert outcome.error == "not an SSH server: no SSH- line in its greeting"


def test_a_server_that_says_nothing_times_out(handle):
    with BannerServer(None) as server:
        outcome = poll(handle, f"ssh://127.0.0.1:{server.port}", timeout_seconds=1)
    assert (outcome.up, outcome.error) == (False, "timed out after 1 s")


def test_a_closed_ssh_port_is_refused(handle):
    port = closed_udp_port()  # nothing listens on TCP there either
    outcome = poll(handle, f"ssh://127.0.0.1:{port}")
    assert outcome.error == "connection refused"


def test_a_blocked_address_is_refused_before_connecting(poll_mode):
    handle = open_handle(poll_mode, blocked_networks=["127.0.0.0/8"])
    try:
        with BannerServer() as server:
            outcome = poll(handle, f"ssh://127.0.0.1:{server.port}")
            assert server.accepted == 0
    finally:
        handle.close()
    assert outcome.error == (
        "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"
    )


# UDP --------------------------------------------------------------------------


def test_a_udp_service_that_answers_is_up_with_its_reply(handle):
    with UdpServer() as server:
        outcome = poll(handle, f"udp://127.0.0.1:{server.port}", payload=b"status")
    assert (outcome.up, outcome.error) == (True, "")
    assert outcome.message == "echo: status"
    assert server.received == [b"status"]


def test_a_reply_without_the_expected_text_is_down(handle):
    with UdpServer(lambda data: b"degraded") as server:
        outcome = poll(
            handle,
            f"udp://127.0.0.1:{server.port}",
            payload=b"\x1b\x00",
            expected_reply="ok",
        )
    assert outcome.error == "reply 'degraded' does not contain 'ok'"


def test_a_reply_is_matched_as_a_regular_expression(handle):
    with UdpServer(lambda data: b"load 0.42") as server:
        outcome = poll(
            handle,
            f"udp://127.0.0.1:{server.port}",
            payload=b"load?",
            expected_reply=r"^load 0\.\d+$",
            expected_reply_regex=True,
        )
    assert outcome.up


def test_no_reply_within_the_timeout_is_down(handle):
    with UdpServer(None) as server:
        outcome = poll(
            handle, f"udp://127.0.0.1:{server.port}", payload=b"x", timeout_seconds=1
        )
    assert (outcome.up, outcome.error) == (False, "no reply: timed out after 1 s")


def test_a_closed_udp_port_is_reported_as_closed(handle):
    outcome = poll(handle, f"udp://127.0.0.1:{closed_udp_port()}", payload=b"x")
    assert (outcome.up, outcome.error) == (False, "port closed")


def test_udp_over_ipv6(handle):
    with UdpServer(family=socket.AF_INET6) as server:
        outcome = poll(handle, f"udp://[::1]:{server.port}", payload=b"six")
    assert outcome.message == "echo: six"
