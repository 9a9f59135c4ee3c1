"""TLS session resumption and the certificate's expiry (issue #32, item 4).

A resumed handshake costs about half the CPU of a full one
(bench/tls_reuse.py), but the server sends no certificate in it, so
libcurl reports no chain: a poll that must read the certificate's expiry
shakes hands in full, and the others may resume, however many hosts the
poller goes round (engine/tls_sessions.py)."""

from __future__ import annotations

import ssl
from datetime import timedelta

import pycurl
import pytest

from polling.engine.tls_sessions import PEERS_PER_SHARE, SessionShares
from polling.engine.transport import CERTIFICATE_REFRESH_SECONDS, Transport
from tests.support.executor_probe import open_handle
from tests.support.probe_phases import FakeClock, now_utc, poll
from tests.support.target_server import TargetServer

FRESH_CONNECTION = {"headers": (("Connection", "close"),)}


def resuming_server(tls_ca, expires, names=("127.0.0.1",)) -> TargetServer:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert(*names, not_after=expires).configure_cert(context)
    context.num_tickets = 2  # TLS 1.3 session tickets: resumption allowed
    return TargetServer(ssl_context=context)


def resumed_handshakes(server: TargetServer) -> int:
    """Handshakes the server resumed (OpenSSL's count of session hits)."""
    return server.ssl_context.session_stats()["hits"]


def test_the_certificate_is_read_again_from_a_server_that_resumes_sessions(
    tls_ca, tls_ca_bundle
):
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
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
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
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


# More hosts than libcurl's session cache of one multi handle holds (25
# peers; a lone easy handle holds 3).
MANY_HOSTS = [f"host-{number}.sessions.test" for number in range(30)]


def test_polls_resume_their_sessions_across_more_hosts_than_one_cache_holds(
    tls_ca, tls_ca_bundle, poll_mode
):
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
    with resuming_server(tls_ca, expires, MANY_HOSTS) as server:
        resolve = [f"{host}:{server.port}:127.0.0.1" for host in MANY_HOSTS]
        handle = open_handle(poll_mode, ca_bundle=tls_ca_bundle, resolve=resolve)
        urls = [f"https://{host}:{server.port}/ok" for host in MANY_HOSTS]
        # Round 1 reads each certificate (a full handshake, no session
        # kept), round 2 shakes hands in full and keeps a session.
        for url in urls + urls:
            assert poll(handle, url, **FRESH_CONNECTION).up
        before = resumed_handshakes(server)
        for url in urls:
            assert poll(handle, url, **FRESH_CONNECTION).up
        resumed = resumed_handshakes(server) - before
        handle.close()
    # Going round 30 hosts, one cache of 25 peers (3 on a lone handle)
    # had dropped sessions before their turn came again: 24 (2) resumed.
    assert (before, resumed) == (0, len(MANY_HOSTS))


def fetch_through(share: pycurl.CurlShare, url: str, ca_bundle: str) -> int:
    """libcurl's result (0: done) for `url` on a bare handle, no RESOLVE
    answers of its own: a name it finds only in `share`'s DNS cache."""
    curl = pycurl.Curl()
    curl.setopt(pycurl.SHARE, share)
    curl.setopt(pycurl.CAINFO, ca_bundle)
    curl.setopt(pycurl.URL, url)
    curl.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
    try:
        curl.perform()
    except pycurl.error as error:
        return error.args[0]
    finally:
        curl.unsetopt(pycurl.SHARE)
        curl.close()
    return 0


def test_each_origin_keeps_its_name_lookups_in_its_share(tls_ca, tls_ca_bundle):
    """libcurl walks the whole DNS cache a transfer used when the transfer
    ends. In the worker's multi handle that was every host looked up in the
    last minute; in the origin's share, the lookups of its few origins."""
    expires = (now_utc() + timedelta(days=5)).replace(microsecond=0)
    sessions = SessionShares()
    with resuming_server(tls_ca, expires, MANY_HOSTS) as server:
        resolve = [f"{host}:{server.port}:127.0.0.1" for host in MANY_HOSTS]
        handle = Transport(ca_bundle=tls_ca_bundle, resolve=resolve, sessions=sessions)
        urls = [f"https://{host}:{server.port}/ok" for host in MANY_HOSTS]
        for url in urls:
            assert poll(handle, url, **FRESH_CONNECTION).up
        handle.close()
        # The names exist nowhere but in the caches the polls used.
        results = [
            fetch_through(
                sessions.share_for(f"{host}:{server.port}", verified=True),
                url,
                tls_ca_bundle,
            )
            for host, url in ((MANY_HOSTS[0], urls[0]), (MANY_HOSTS[-1], urls[-1]))
        ]
    assert sessions.shares == 2
    assert results == [0, 0]


def test_plain_http_origins_keep_their_name_lookups_in_a_share_too(tls_ca_bundle):
    sessions = SessionShares()
    with TargetServer() as server:
        origin = f"plain.sessions.test:{server.port}"
        url = f"http://{origin}/ok"
        handle = Transport(
            ca_bundle=tls_ca_bundle,
            resolve=[f"{origin}:127.0.0.1"],
            sessions=sessions,
        )
        assert poll(handle, url).up
        handle.close()
        share = sessions.share_for(origin, verified=True)
        result = fetch_through(share, url, tls_ca_bundle)
    assert (len(sessions), result) == (1, 0)


def test_each_share_keeps_no_more_origins_than_its_cache_holds():
    sessions = SessionShares(max_origins=60)
    origins = [f"host-{number}.test:443" for number in range(50)]
    shares = [sessions.share_for(origin, verified=True) for origin in origins]
    # libcurl keys a session by whether the certificate is verified too.
    shares += [sessions.share_for(origins[0], verified=False)]
    per_share = [shares.count(share) for share in {id(s): s for s in shares}.values()]
    assert per_share == [PEERS_PER_SHARE, PEERS_PER_SHARE, 1]
    assert sessions.share_for(origins[7], verified=True) is shares[7]


@pytest.mark.parametrize("extra", [1, 5])
def test_origins_past_the_cap_get_no_share_and_the_others_keep_theirs(extra):
    sessions = SessionShares(max_origins=30)
    placed = [
        sessions.share_for(f"host-{n}.test:443", verified=True) for n in range(30)
    ]
    past = [
        sessions.share_for(f"late-{n}.test:443", verified=True) for n in range(extra)
    ]
    assert past == [None] * extra
    assert (len(sessions), sessions.shares) == (30, 2)
    assert sessions.share_for("host-29.test:443", verified=True) is placed[29]
