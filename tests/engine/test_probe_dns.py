"""The DNS check against a real dnsmasq on loopback serving a test zone
(tests/support/dns_server.py), run both ways a poll runs: each record
type, the expectations, NXDOMAIN, SERVFAIL, truncation retried over TCP,
a resolver that never answers, and each failure's reason as text."""

from __future__ import annotations

from datetime import UTC, datetime

import dns.flags
import dns.message
import dns.rrset
import pytest

from polling.engine import lookup
from polling.engine.types import Outcome, Target, Task
from tests.support.dns_server import BIG_TXT, DnsServer
from tests.support.executor_probe import open_handle, run_poll
from tests.support.socket_servers import BannerServer, UdpServer, closed_udp_port


@pytest.fixture(scope="module")
def server():
    with DnsServer() as server:
        yield server


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


def url(server, name: str, rdtype: str) -> str:
    return f"dns://127.0.0.1:{server.port}/{name}?type={rdtype}"


@pytest.mark.parametrize(
    ("name", "rdtype", "answer"),
    [
        ("www.test.lan", "A", "192.0.2.10"),
        ("www.test.lan", "AAAA", "2001:db8::10"),
        ("alias.test.lan", "CNAME", "www.test.lan."),
        ("test.lan", "MX", "10 mail.test.lan."),
        ("test.lan", "NS", "ns1.test.lan."),
        ("test.lan", "TXT", '"v=spf1 -all"'),
        (
            "test.lan",
            "SOA",
            "ns1.test.lan. hostmaster.test.lan. 2026112901 3600 600 86400 300",
        ),
        ("_sip._tcp.test.lan", "SRV", "10 20 5060 sip.test.lan."),
        ("test.lan", "CAA", '0 issue "letsencrypt.org"'),
        ("10.2.0.192.in-addr.arpa", "PTR", "www.test.lan."),
    ],
)
def test_each_record_type_is_checked(handle, server, name, rdtype, answer):
    outcome = poll(handle, url(server, name, rdtype), dns_answers=(answer,))
    assert (outcome.up, outcome.error) == (True, "")
    assert answer in outcome.message
    assert outcome.response_time_ms is not None


def test_an_answer_not_expected_is_down_naming_both(handle, server):
    outcome = poll(
        handle, url(server, "www.test.lan", "A"), dns_answers=("192.0.2.99",)
    )
    assert not outcome.up
    assert outcome.error == (
        "A www.test.lan: expected 192.0.2.99, got 192.0.2.10, 192.0.2.11"
    )


def test_all_of_needs_every_expected_answer(handle, server):
    target = url(server, "www.test.lan", "A")
    both = ("192.0.2.10", "192.0.2.11")
    assert poll(handle, target, dns_answers=both, dns_match="all").up
    outcome = poll(
        handle, target, dns_answers=("192.0.2.10", "192.0.2.12"), dns_match="all"
    )
    assert outcome.error == (
        "A www.test.lan: 192.0.2.12 missing, got 192.0.2.10, 192.0.2.11"
    )


def test_exactly_refuses_an_extra_answer(handle, server):
    outcome = poll(
        handle,
        url(server, "www.test.lan", "A"),
        dns_answers=("192.0.2.10",),
        dns_match="exactly",
    )
    assert outcome.error == (
        "A www.test.lan: expected exactly 192.0.2.10, got 192.0.2.10, 192.0.2.11"
    )


def test_a_name_that_does_not_exist_is_nxdomain(handle, server):
    outcome = poll(handle, url(server, "nope.test.lan", "A"))
    assert (outcome.up, outcome.error) == (False, "expected NOERROR, got NXDOMAIN")


def test_nxdomain_can_be_what_is_expected(handle, server):
    outcome = poll(handle, url(server, "nope.test.lan", "A"), dns_rcode="NXDOMAIN")
    assert (outcome.up, outcome.message) == (True, "NXDOMAIN")


def test_a_failing_upstream_is_servfail(handle, server):
    outcome = poll(handle, url(server, "x.fail.lan", "A"))
    assert outcome.error == "expected NOERROR, got SERVFAIL"


def test_no_record_of_the_type_is_down(handle, server):
    outcome = poll(handle, url(server, "www.test.lan", "MX"))
    assert outcome.error == "no MX record for www.test.lan"


def test_a_truncated_answer_is_asked_again_over_tcp(handle, server):
    outcome = poll(
        handle,
        url(server, "big.test.lan", "TXT"),
        dns_answers=(" ".join(f'"{part}"' for part in BIG_TXT),),
        dns_match="exactly",
    )
    assert (outcome.up, outcome.error) == (True, "")


def test_a_resolver_that_never_answers_costs_one_timeout(handle):
    with UdpServer(None) as mute:
        outcome = poll(
            handle,
            f"dns://127.0.0.1:{mute.port}/www.test.lan?type=A",
            timeout_seconds=1,
        )
        assert len(mute.received) == 1
    assert outcome.error == (
        f"no answer from 127.0.0.1:{mute.port}: timed out after 1 s"
    )


def test_a_closed_resolver_port_says_so(handle):
    port = closed_udp_port()
    outcome = poll(handle, f"dns://127.0.0.1:{port}/www.test.lan?type=A")
    assert outcome.error == f"no DNS server at 127.0.0.1:{port} (port closed)"


def _authenticated(data: bytes) -> bytes:
    query = dns.message.from_wire(data)
    response = dns.message.make_response(query)
    response.flags |= dns.flags.AD
    response.answer.append(
        dns.rrset.from_text(query.question[0].name, 60, "IN", "A", "192.0.2.10")
    )
    return response.to_wire()


def test_dnssec_needs_the_resolvers_ad_flag(handle, server):
    outcome = poll(handle, url(server, "www.test.lan", "A"), dns_dnssec=True)
    assert outcome.error == (
        "answer not authenticated: the resolver did not set the AD flag"
    )
    with UdpServer(_authenticated) as validating:
        outcome = poll(
            handle,
            f"dns://127.0.0.1:{validating.port}/www.test.lan?type=A",
            dns_dnssec=True,
        )
    assert (outcome.up, outcome.error) == (True, "")


def test_a_check_without_a_resolver_asks_the_poller_s_name_server(handle, server):
    lookup.set_nameserver("127.0.0.1", server.port)
    try:
        outcome = poll(handle, "dns:///www.test.lan?type=AAAA")
    finally:
        lookup.set_nameserver(None)
    assert outcome.message == "NOERROR: 2001:db8::10"


def test_a_resolver_in_a_blocked_network_is_never_asked(poll_mode, server):
    handle = open_handle(poll_mode, blocked_networks=["127.0.0.0/8"])
    try:
        outcome = poll(handle, url(server, "www.test.lan", "A"))
    finally:
        handle.close()
    assert outcome.error == "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"


def test_a_resolver_named_by_its_host_name_is_looked_up_first(handle, server):
    lookup.set_nameserver("127.0.0.1", server.port)
    try:
        outcome = poll(
            handle, f"dns://loop.test.lan:{server.port}/www.test.lan?type=AAAA"
        )
    finally:
        lookup.set_nameserver(None)
    assert outcome.message == "NOERROR: 2001:db8::10"


# Host names of SSH and UDP checks are looked up the same way -----------------


def test_ssh_and_udp_checks_look_names_up_without_blocking(handle, server):
    lookup.set_nameserver("127.0.0.1", server.port)
    try:
        with BannerServer() as banner:
            missing = poll(handle, f"ssh://nope.test.lan:{banner.port}")
            found = poll(handle, f"ssh://loop.test.lan:{banner.port}")
        with UdpServer() as echo:
            echoed = poll(handle, f"udp://loop.test.lan:{echo.port}", payload=b"x")
    finally:
        lookup.set_nameserver(None)
    assert missing.error == "DNS lookup failed for nope.test.lan"
    assert (found.up, found.message) == (True, "SSH-2.0-OpenSSH_9.2p1 Debian")
    assert (echoed.up, echoed.message) == (True, "echo: x")
