"""The blocked-networks guard for what the tasks process sends: webhook
and Apprise channels of a team that is not trusted, and every subscriber's
webhook (a visitor is never trusted), S4-03 and S4-13.

As for polls (polling/engine/blocked.py), the check is made where the
connection is opened, on the addresses the name resolves to at that moment,
for every connection, so a redirect or a name that points into a blocked
network is refused too; the connection then goes to the address that was
checked (TLS still verifies the name). Nothing is sent to a refused address,
so `last_error` can only say that it was refused, never what it answered.

- httpx (webhooks): `guarded_client` uses httpcore's network backend.
- Apprise: `guarding_urllib3` wraps urllib3's create_connection for the
  calling context while Apprise sends (the transport makes Apprise send on
  this thread). Apprise services that do not send through requests/urllib3
  (e-mail, syslog, MQTT, ...) are refused for such channels (`sends_over_http`).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpcore
import httpx

BLOCKED = "{address} is in a blocked network (POLL_BLOCKED_NETWORKS)"
NOT_PUBLIC = "{address} is not a public address (STATUS_WEBHOOK_ALLOW_PRIVATE)"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Refused(OSError):
    """A connection the guard did not open; `reason` says why, in words
    that name the address, never the URL."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Guard:
    networks: tuple[Network, ...] = ()
    public_only: bool = False  # subscribers' webhooks, unless allowed

    @classmethod
    def of(cls, networks: Iterable[str], *, public_only: bool = False) -> Guard:
        parsed = tuple(
            ipaddress.ip_network(value.strip(), strict=False)
            for value in networks
            if value.strip()
        )
        return cls(parsed, public_only)

    def refusal(self, address: str) -> str:
        """Why a connection to `address` is refused, or ""."""
        ip = ipaddress.ip_address(address.split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        for network in self.networks:
            if ip.version == network.version and ip in network:
                return BLOCKED.format(address=ip)
        if self.public_only and not ip.is_global:
            return NOT_PUBLIC.format(address=ip)
        return ""

    def checked_address(self, host: str, port: int) -> str:
        """The address to connect to for `host`, looked up now; raises
        Refused when any address it resolves to is refused, and OSError
        (socket.gaierror) when it resolves to none."""
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        for address in addresses:
            if reason := self.refusal(address):
                raise Refused(reason)
        return addresses[0]


# Loopback, "this network", RFC 1918, CGNAT and unique-local IPv6: what
# STATUS_WEBHOOK_ALLOW_PRIVATE opens to subscribers' webhooks. Link-local
# and single metadata addresses inside these (fd00:ec2::254,
# 100.100.100.200) stay blocked.
PRIVATE_RANGES = tuple(
    ipaddress.ip_network(value)
    for value in (
        "127.0.0.0/8",
        "::1/128",
        "0.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "fc00::/7",
    )
)


def subscriber_guard(blocked: Iterable[str], *, allow_private: bool) -> Guard:
    """A subscriber's webhook is a visitor's: every blocked network and any
    address that is not public; with `allow_private`, loopback and private
    ranges are allowed, link-local and metadata addresses never."""
    guard = Guard.of(blocked, public_only=not allow_private)
    if not allow_private:
        return guard
    kept = tuple(
        network
        for network in guard.networks
        if network.num_addresses == 1
        or not any(
            network.version == private.version and network.subnet_of(private)
            for private in PRIVATE_RANGES
        )
    )
    return Guard(kept, public_only=False)


# httpx: webhooks


class _GuardedBackend(httpcore.SyncBackend):
    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    def connect_tcp(self, host, port, timeout=None, local_address=None, **options):
        try:
            address = self.guard.checked_address(host, port)
        except Refused:
            raise
        except OSError as error:
            raise httpcore.ConnectError(str(error)) from None
        return super().connect_tcp(address, port, timeout, local_address, **options)


class _GuardedTransport(httpx.HTTPTransport):
    def __init__(self, guard: Guard) -> None:
        super().__init__()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=_GuardedBackend(guard),
        )


def guarded_client(guard: Guard | None, *, timeout: float) -> httpx.Client:
    """An httpx client whose every connection passes `guard` (no guard: a
    plain client). Proxies from the environment are not used when guarded:
    the guard checks where the connection goes."""
    if guard is None:
        return httpx.Client(timeout=timeout, follow_redirects=False)
    return httpx.Client(
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        transport=_GuardedTransport(guard),
    )


# urllib3: Apprise


@dataclass
class Watch:
    """What the guard refused while it watched ("" when nothing)."""

    refused: str = ""


# A context variable, not a thread-local: Apprise copies the context into
# the threads it may hand a send to (submit_with_context).
_watching: ContextVar[tuple[Guard, Watch] | None] = ContextVar(
    "outbound_guard", default=None
)
_install_lock = threading.Lock()
_original_create_connection = None


def _guarded_create_connection(address, *args, **kwargs):
    watching = _watching.get()
    if watching is None:
        return _original_create_connection(address, *args, **kwargs)
    guard, watch = watching
    host, port = address
    try:
        checked = guard.checked_address(host, port)
    except Refused as refused:
        watch.refused = refused.reason
        raise
    return _original_create_connection((checked, port), *args, **kwargs)


def _install() -> None:
    global _original_create_connection
    from urllib3.util import connection

    with _install_lock:
        if connection.create_connection is not _guarded_create_connection:
            _original_create_connection = connection.create_connection
            connection.create_connection = _guarded_create_connection


@contextmanager
def guarding_urllib3(guard: Guard | None) -> Iterator[Watch]:
    """Every urllib3 connection this thread opens inside the block passes
    `guard`; the Watch says what was refused, once the block ends."""
    watch = Watch()
    if guard is None:
        yield watch
        return
    _install()
    token = _watching.set((guard, watch))
    try:
        yield watch
    finally:
        _watching.reset(token)


def sends_over_http(service: object) -> bool:
    """Whether an Apprise service (an instantiated plugin) sends through
    requests, so through urllib3 and the guard."""
    import requests

    module = sys.modules.get(type(service).__module__)
    return getattr(module, "requests", None) is requests
