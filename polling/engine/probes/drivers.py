"""What the probes of the kinds checked through a blocking driver share
(postgres.py, mysql.py, redis.py): the endpoint the URL names, the
address to connect to (never one in a blocked network for an untrusted
team: it is resolved and checked here, and the driver is pointed at that
address, so a second lookup cannot lead elsewhere), the phases timed, and
the outcome.

These run on the side pool's threads (engine/side_pool.py), never on a
libcurl worker. Each driver is imported when its first check runs, so a
poller without such checks never loads them. A reason never carries the
password: drivers may repeat what they were given.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import parse_qsl, unquote, urlsplit

import certifi

from polling.engine import verdict
from polling.engine.blocked import Network, blocked_network
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import timed_out
from polling.engine.transport import Phases
from polling.engine.types import Outcome, Task

MASK = "***"


class DriverFailed(Exception):
    """The check failed; `reason` says why, for the poll's error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Endpoint:
    """What a driver URL names: scheme://user:password@host:port/path?params."""

    scheme: str
    host: str
    port: int
    user: str = ""
    password: str = field(default="", repr=False)
    path: str = ""  # without its leading slash, unquoted
    params: dict[str, str] = field(default_factory=dict)


def endpoint(url: str, default_port: int) -> Endpoint:
    """The endpoint of a driver URL; raises DriverFailed when it is not one."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or default_port
    except ValueError:
        raise DriverFailed("invalid URL: the port is not a number") from None
    if not host:
        raise DriverFailed("invalid URL: no host name")
    return Endpoint(
        scheme=parts.scheme.lower(),
        host=host,
        port=port,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        path=unquote(parts.path.lstrip("/")),
        params=dict(parse_qsl(parts.query)),
    )


class Watch:
    """The phases of one check, timed: dns, connect (login included), query."""

    def __init__(self) -> None:
        self.began = time.perf_counter()
        self.us: dict[str, int] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.us[name] = round((time.perf_counter() - began) * 1_000_000)

    def outcome(
        self, task: Task, started_at: datetime, error: str, message: str = ""
    ) -> Outcome:
        """The check's Outcome: up when `error` is empty and it was fast
        enough; its response time is the whole check's."""
        elapsed_ms = round((time.perf_counter() - self.began) * 1000)
        if not error:
            error = verdict.slow_reason(task.target.max_response_time_ms, elapsed_ms)
        trace = Trace(
            Phases(
                dns_us=self.us.get("dns"),
                connect_us=self.us.get("connect"),
                first_byte_us=self.us.get("query"),
            )
        )
        return outcome(
            task,
            started_at,
            trace,
            None,
            error,
            response_time_ms=elapsed_ms,
            message=message[:200],
        )


def resolve(
    point: Endpoint,
    networks: Sequence[Network],
    *,
    trusted: bool,
    watch: Watch,
) -> str:
    """The address to connect to: the host's first, looked up (timed as
    the dns phase) unless it is one. Raises DriverFailed when the lookup
    fails, or when the address is in a blocked network and the team is not
    trusted."""
    try:
        address = ipaddress.ip_address(point.host.split("%")[0])
    except ValueError:
        with watch.phase("dns"):
            try:
                found = socket.getaddrinfo(
                    point.host, point.port, type=socket.SOCK_STREAM
                )
            except (OSError, UnicodeError):
                raise DriverFailed(f"DNS lookup failed for {point.host}") from None
        address = ipaddress.ip_address(found[0][4][0].split("%")[0])
    if not trusted and blocked_network(address, networks) is not None:
        raise DriverFailed(f"{address} is in a blocked network (POLL_BLOCKED_NETWORKS)")
    return str(address)


@functools.cache
def verified_tls_context() -> ssl.SSLContext:
    """The TLS context of the drivers' checks: certifi's authorities and
    the host name checked. One for the process: loading the authorities
    costs milliseconds, and a context serves many threads at once."""
    return ssl.create_default_context(cafile=certifi.where())


def open_socket(address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to address:port, its reads and writes bounded by
    `timeout` too; raises DriverFailed."""
    try:
        sock = socket.create_connection((address, port), timeout)
    except OSError as error:
        raise DriverFailed(network_reason(error, timeout)) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def network_reason(error: OSError, timeout: float) -> str:
    if isinstance(error, TimeoutError | socket.timeout):
        return timed_out(timeout)
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, ConnectionResetError):
        return "connection reset by peer"
    return error.strerror or type(error).__name__


def expected_reason(expected: str | None, got: object) -> str:
    """Why the first value answered is not the one expected, or ""."""
    if expected is None:
        return ""
    if got is None:
        return f"expected “{expected}”, got nothing"
    shown = got.decode(errors="replace") if isinstance(got, bytes) else str(got)
    return "" if shown == expected else f"expected “{expected}”, got “{shown}”"


def masked(text: str, point: Endpoint) -> str:
    """`text` with the endpoint's password masked, on one line."""
    text = " ".join(str(text).split())
    if point.password:
        text = text.replace(point.password, MASK)
    return text
