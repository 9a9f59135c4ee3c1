"""What probe() measures besides up or down: how long each phase of a poll
took, and when the server's certificate expires. Real servers on 127.0.0.1."""

from __future__ import annotations

import ssl
from datetime import timedelta
from urllib.parse import quote

import pytest

from polling.engine.probe import make_handle
from polling.engine.transport import CERTIFICATE_REFRESH_SECONDS, Transport
from tests.support.executor_probe import open_handle
from tests.support.probe_phases import FakeClock, now_utc, poll
from tests.support.target_server import TargetServer


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


@pytest.fixture
def trusting_handle(poll_mode, tls_ca_bundle):
    handle = open_handle(poll_mode, ca_bundle=tls_ca_bundle)
    yield handle
    handle.close()


def test_a_new_plain_connection_has_dns_connect_and_first_byte_but_no_tls(
    handle, target_server
):
    outcome = poll(handle, target_server.url("/ok"))

    assert outcome.dns_ms is not None
    assert outcome.connect_ms is not None
    assert outcome.tls_ms is None
    assert outcome.first_byte_ms is not None


def test_first_byte_is_the_time_the_server_took_to_answer(handle, target_server):
    outcome = poll(handle, target_server.url("/delay/300"))

    assert 300 <= outcome.first_byte_ms <= outcome.response_time_ms


def test_a_reused_connection_has_only_a_first_byte(handle, target_server):
    poll(handle, target_server.url("/ok"))

    outcome = poll(handle, target_server.url("/ok"))

    assert (outcome.dns_ms, outcome.connect_ms, outcome.tls_ms) == (None, None, None)
    assert outcome.first_byte_ms is not None
    assert target_server.count() == 2


def test_a_refused_connection_has_no_connect_or_first_byte(handle, target_server):
    url = target_server.url("/ok")
    target_server.stop()

    outcome = poll(handle, url)

    assert outcome.error == "connection refused"
    assert outcome.connect_ms is None
    assert outcome.first_byte_ms is None


def test_a_body_that_times_out_keeps_the_phases_it_got_through(handle, target_server):
    outcome = poll(handle, target_server.url("/drip/10"), timeout_seconds=1)

    assert outcome.error == "timed out after 1 s"
    assert outcome.connect_ms is not None
    assert outcome.first_byte_ms is not None


def test_https_records_the_handshake_and_the_certificate_expiry(tls_ca, tls_ca_bundle):
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1", not_after=expires).configure_cert(context)
    handle = make_handle(ca_bundle=tls_ca_bundle)

    with TargetServer(ssl_context=context) as server:
        first = poll(handle, server.url("/ok"))
        reused = poll(handle, server.url("/ok"))

    assert first.up is True
    assert first.tls_ms is not None
    assert first.tls_expires_at == expires
    # No handshake on a reused connection, but the same certificate.
    assert reused.tls_ms is None
    assert reused.tls_expires_at == expires


def test_plain_http_has_no_certificate(handle, target_server):
    assert poll(handle, target_server.url("/ok")).tls_expires_at is None


def test_a_redirect_to_https_adds_its_handshake_and_certificate(
    trusting_handle, target_server, tls_target_server
):
    location = quote(tls_target_server.url("/ok"), safe="")

    outcome = poll(
        trusting_handle, target_server.url(f"/redirect-to?location={location}")
    )

    assert outcome.up is True
    assert outcome.tls_ms is not None
    assert outcome.tls_expires_at is not None
    assert target_server.count() == tls_target_server.count() == 1


def test_a_failed_handshake_records_no_certificate(handle, tls_target_server):
    outcome = poll(handle, tls_target_server.url("/ok"))

    assert outcome.error.startswith("TLS certificate verify failed: ")
    assert outcome.tls_expires_at is None
    assert outcome.connect_ms is not None


def test_new_handshakes_read_the_certificate_again_only_once_it_is_old(
    tls_ca, tls_ca_bundle
):
    """Reading the chain costs a seventh of a handshake, and a certificate
    rarely changes: within CERTIFICATE_REFRESH_SECONDS a handshake with the
    same origin reports the expiry read before."""
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1", not_after=expires).configure_cert(context)
    # A resumed session shows no certificate: every handshake here is full.
    context.num_tickets = 0
    clock = FakeClock()
    handle = Transport(ca_bundle=tls_ca_bundle, clock=clock)
    fresh_connection = {"headers": (("Connection", "close"),)}

    with TargetServer(ssl_context=context) as server:
        first = poll(handle, server.url("/ok"), **fresh_connection)
        clock.now += CERTIFICATE_REFRESH_SECONDS - 1
        second = poll(handle, server.url("/ok"), **fresh_connection)
        assert handle.certificates_read == 1
        clock.now += 1
        third = poll(handle, server.url("/ok"), **fresh_connection)
    handle.close()

    assert all(o.up and o.tls_ms is not None for o in (first, second, third))
    assert first.tls_expires_at == second.tls_expires_at == third.tls_expires_at
    assert first.tls_expires_at == expires
    assert handle.certificates_read == 2
