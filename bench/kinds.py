"""The targets of the capacity benchmark's check kinds (issues #41 and
#43), every one on loopback, and each project's URL.

    http      nginx's /ok (bench/nginx.py), as the fast scenarios
    icmp      icmp://127.0.0.x, x from 1 to 254: the kernel answers
    dns       Debian's dnsmasq on 127.0.0.1, answering A, AAAA, MX and TXT
              questions from local data only (--no-resolv, --no-hosts: no
              query ever leaves the machine)
    smtp, ws, grpc
              bench/service_targets.py, one process: aiosmtpd, a websockets
              echo server, a gRPC server with the standard health service
    redis     the machine's Redis, 127.0.0.1:6379, database 14: PING
    postgres  the machine's PostgreSQL, 127.0.0.1:5432: SELECT 1

The servers listen on BENCH_KINDS_PORT_BASE (default 25050) and the next
ports. Their CPU is their processes' own, never the poller's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, process_cpu_seconds
from nginx import NginxTarget

from tests.support.dns_server import DnsServer

PORT_BASE = int(os.environ.get("BENCH_KINDS_PORT_BASE", "25050"))
DNS_PORT, SMTP_PORT, WS_PORT, GRPC_PORT = range(PORT_BASE, PORT_BASE + 4)
SERVED_BY_PROCESS = ("smtp", "ws", "grpc")
START_TIMEOUT_SECONDS = 20
# What the DNS server answers: an addn-hosts file (A, AAAA) and records.
DNS_HOSTS = (
    "192.0.2.10 www.bench.lan\n2001:db8::10 www.bench.lan\n192.0.2.20 api.bench.lan\n"
)
DNS_QUESTIONS = (
    "www.bench.lan?type=A",
    "www.bench.lan?type=AAAA",
    "api.bench.lan?type=A",
    "bench.lan?type=MX",
    "bench.lan?type=TXT",
)
REDIS_URL = "redis://127.0.0.1:6379/14"
POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres?query=SELECT%201"


class BenchDns(DnsServer):
    """The tests' dnsmasq (tests/support/dns_server.py) at a port of the
    bench's, serving bench.lan from local data only."""

    def __init__(self, port: int, folder: Path) -> None:
        super().__init__()
        self.port = port
        self.hosts = folder / "bench.hosts"
        self.hosts.write_text(DNS_HOSTS)

    def arguments(self) -> list[str]:
        common = super().arguments()  # foreground, no upstream, no cache
        return [
            *common[: common.index("--local=/test.lan/")],
            "--local=/bench.lan/",
            f"--addn-hosts={self.hosts}",
            "--mx-host=bench.lan,mail.bench.lan,10",
            "--txt-record=bench.lan,v=spf1 -all",
        ]

    @property
    def pid(self) -> int:
        return self._process.pid


class ServiceTargets:
    """bench/service_targets.py in its own process."""

    def __enter__(self) -> ServiceTargets:
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "service_targets.py"),
                *("--smtp-port", str(SMTP_PORT)),
                *("--ws-port", str(WS_PORT)),
                *("--grpc-port", str(GRPC_PORT)),
            ]
        )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not all(_listening(port) for port in (SMTP_PORT, WS_PORT, GRPC_PORT)):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.__exit__()
                raise RuntimeError("bench/service_targets.py did not start")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(10)


class KindTargets:
    """The servers the kinds asked for, started on entry; urls_file()
    writes one URL per project of a scenario."""

    def __init__(self, kinds: set[str], nginx: NginxTarget) -> None:
        self.kinds = kinds
        self.nginx = nginx
        self._folder = tempfile.TemporaryDirectory(prefix="bench-kinds-")
        self.folder = Path(self._folder.name)
        self.dns: BenchDns | None = None
        self.services: ServiceTargets | None = None

    def __enter__(self) -> KindTargets:
        try:
            if "dns" in self.kinds:
                self.dns = BenchDns(DNS_PORT, self.folder).__enter__()
            if self.kinds & set(SERVED_BY_PROCESS):
                self.services = ServiceTargets().__enter__()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        for server in (self.services, self.dns):
            if server is not None:
                server.__exit__(None, None, None)
        self._folder.cleanup()

    def cpu_seconds(self) -> float:
        """CPU of the targets' own processes (dnsmasq, service_targets.py)."""
        pids = [s.pid for s in (self.dns,) if s] + (
            [self.services.process.pid] if self.services else []
        )
        return sum(process_cpu_seconds(pid) for pid in pids)

    def url(self, kind: str, i: int) -> str:
        """The URL of the i-th project of a kind."""
        if kind == "http":
            return self.nginx.url(f"/ok?p={i}")
        if kind == "icmp":
            return f"icmp://127.0.0.{i % 254 + 1}"
        if kind == "dns":
            return f"dns://127.0.0.1:{DNS_PORT}/{DNS_QUESTIONS[i % len(DNS_QUESTIONS)]}"
        if kind == "smtp":
            return f"smtp://127.0.0.1:{SMTP_PORT}"
        if kind == "ws":
            return f"ws://127.0.0.1:{WS_PORT}/?send=ping&expect=ping"
        if kind == "grpc":
            return f"grpc://127.0.0.1:{GRPC_PORT}"
        if kind == "redis":
            return REDIS_URL
        if kind == "postgres":
            return POSTGRES_URL
        raise ValueError(f"no target for the kind {kind!r}")

    def urls_file(self, mix: tuple[tuple[str, int], ...]) -> Path:
        """One URL a line, the kinds interleaved evenly: the scheduler
        spreads first polls by rank, so each kind is spread over the
        whole interval."""
        order = sorted(
            (j / count, n, kind, j)
            for n, (kind, count) in enumerate(mix)
            for j in range(count)
        )
        path = self.folder / "urls.txt"
        path.write_text("".join(f"{self.url(kind, j)}\n" for _, _, kind, j in order))
        return path


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
