"""A real DNS server on 127.0.0.1 for the DNS checks' tests: Debian's
dnsmasq serving the zone test.lan with every record type a DNS check asks
for, NXDOMAIN for other names in it, SERVFAIL for fail.lan (forwarded to
an upstream on loopback that answers SERVFAIL), and nothing upstream
otherwise (--no-resolv: no query ever leaves the machine). Only loop.test.lan
points at an address a test may send to (127.0.0.1).

    with DnsServer() as server:
        poll(f"dns://127.0.0.1:{server.port}/www.test.lan?type=A")
"""

from __future__ import annotations

import shutil
import socket
import subprocess

import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata

from tests.support.socket_servers import UdpServer
from tests.support.waiting import wait_until

DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
BIG_TXT = ["a" * 200, "b" * 200, "c" * 200]  # over 512 bytes: truncated over UDP


def _hex(rdtype: str, text: str) -> str:
    rdata = dns.rdata.from_text(
        "IN", rdtype, text, origin=dns.name.root, relativize=False
    )
    return rdata.to_wire().hex()


def _servfail(data: bytes) -> bytes:
    response = dns.message.make_response(dns.message.from_wire(data))
    response.set_rcode(dns.rcode.SERVFAIL)
    return response.to_wire()


def free_port() -> int:
    """A port free for both UDP and TCP on 127.0.0.1 (just released)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            with socket.socket() as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port


class DnsServer:
    def __init__(self) -> None:
        self.port = free_port()
        self._upstream = UdpServer(_servfail)
        self._process: subprocess.Popen | None = None

    def arguments(self) -> list[str]:
        soa = "ns1.test.lan. hostmaster.test.lan. 2026112901 3600 600 86400 300"
        big = ",".join(BIG_TXT)
        return [
            DNSMASQ,
            "--keep-in-foreground",
            "--conf-file=/dev/null",
            "--no-resolv",
            "--no-hosts",
            "--no-poll",
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            f"--port={self.port}",
            "--user=root",
            "--pid-file=",
            "--cache-size=0",
            "--local=/test.lan/",
            f"--server=/fail.lan/127.0.0.1#{self._upstream.port}",
            "--host-record=www.test.lan,192.0.2.10,2001:db8::10",
            "--host-record=www.test.lan,192.0.2.11",
            "--host-record=loop.test.lan,127.0.0.1",
            "--cname=alias.test.lan,www.test.lan",
            "--mx-host=test.lan,mail.test.lan,10",
            "--srv-host=_sip._tcp.test.lan,sip.test.lan,5060,10,20",
            "--txt-record=test.lan,v=spf1 -all",
            f"--txt-record=big.test.lan,{big}",
            "--caa-record=test.lan,0,issue,letsencrypt.org",
            "--ptr-record=10.2.0.192.in-addr.arpa,www.test.lan",
            f"--dns-rr=test.lan,6,{_hex('SOA', soa)}",
            f"--dns-rr=test.lan,2,{_hex('NS', 'ns1.test.lan.')}",
        ]

    def __enter__(self) -> DnsServer:
        self._upstream.__enter__()
        self._process = subprocess.Popen(
            self.arguments(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wait_until(self._answers)
        return self

    def __exit__(self, *exc_info) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
            self._process.stderr.close()
        self._upstream.__exit__(*exc_info)

    def _answers(self) -> bool:
        assert self._process.poll() is None, self._process.stderr.read().decode()
        query = dns.message.make_query("www.test.lan.", "A")
        try:
            dns.query.udp(query, "127.0.0.1", port=self.port, timeout=0.2)
        except (dns.exception.Timeout, OSError):
            return False
        return True
