"""TLS session resumption and the certificate's expiry (issue #32, item 4).

A resumed handshake costs about 40 % less CPU than a full one
(bench/tls_reuse.py), but the server sends no certificate in it, so
libcurl reports no chain: a poll that must read the certificate's expiry
shakes hands in full, and the others may resume."""

from __future__ import annotations

import ssl
from datetime import timedelta

from polling.engine.transport import CERTIFICATE_REFRESH_SECONDS, Transport
from tests.target_server import TargetServer
from tests.test_probe_phases import FakeClock, _now, poll

FRESH_CONNECTION = {"headers": (("Connection", "close"),)}


def resuming_server(tls_ca, expires) -> TargetServer:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1", not_after=expires).configure_cert(context)
    context.num_tickets = 2  # TLS 1.3 session tickets: resumption allowed
    return TargetServer(ssl_context=context)


def resumed_handshakes(server: TargetServer) -> int:
    """Handshakes the server resumed (OpenSSL's count of session hits)."""
    return server.ssl_context.session_stats()["hits"]


def test_the_certificate_is_read_again_from_a_server_that_resumes_sessions(
    tls_ca, tls_ca_bundle
):
    expires = (_now() + timedelta(days=5)).replace(microsecond=0)
    clock = FakeClock()
    handle = Transport(ca_bundle=tls_ca_bundle, clock=clock)
    with resuming_server(tls_ca, expires) as server:
        polls = [poll(handle, server.url("/ok"), **FRESH_CONNECTION)]
        clock.now += CERTIFICATE_REFRESH_SECONDS - 1
        polls += [poll(handle, server.url("/ok"), **FRESH_CONNECTION)]
        polls += [poll(handle, server.url("/ok"), **FRESH_CONNECTION)]
        assert (handle.certificates_read, resumed_handshakes(server)) == (1, 1)
        clock.now += 1
        # Due to be read again: a resumed handshake would show no chain,
        # so this one is a full one.
        polls += [poll(handle, server.url("/ok"), **FRESH_CONNECTION)]
        assert resumed_handshakes(server) == 1
    handle.close()
    assert all(o.up for o in polls)
    assert handle.certificates_read == 2
    assert {o.tls_expires_at for o in polls} == {expires}


def test_polls_that_need_no_certificate_resume_their_session(tls_ca, tls_ca_bundle):
    expires = (_now() + timedelta(days=5)).replace(microsecond=0)
    handle = Transport(ca_bundle=tls_ca_bundle, clock=FakeClock())
    with resuming_server(tls_ca, expires) as server:
        poll(handle, server.url("/ok"), **FRESH_CONNECTION)  # reads the chain
        for _ in range(4):
            poll(handle, server.url("/ok"), **FRESH_CONNECTION)
        resumed = resumed_handshakes(server)
    handle.close()
    # The handshake that read the chain left no session to resume (libcurl
    # stores none with its cache off); the next one does, and the rest
    # resume it.
    assert resumed == 3
