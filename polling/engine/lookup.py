"""A host's addresses, for the kinds on the poller's own sockets (SSH,
UDP), without blocking a worker: an address written as one, then the
hosts file, then an A and an AAAA query to the system's first name
server (dns_query.py), within the poll's deadline. libcurl resolves for
HTTP and TCP checks as it always has.

The name server is the system's, like libcurl's lookups: it is the
poller's own infrastructure, not the project's target, so the blocked
networks apply to the addresses found, not to it.
"""

from __future__ import annotations

import functools
import ipaddress
import time
from collections.abc import Generator
from typing import Any

import dns.rcode
import dns.rdatatype
import dns.resolver

from polling.engine.dns_query import DnsQuery
from polling.engine.dns_wire import Question
from polling.engine.sockets import SocketFailed

HOSTS_FILE = "/etc/hosts"
DNS_PORT = 53


class LookupFailed(Exception):
    """`reason` is the poll's: "DNS lookup failed for db.example.com"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# The name server every lookup and every dns:// check without a resolver
# asks, as (address, port); None: the system's. Set once at start (tests
# point it at a server on loopback).
_nameserver: tuple[str, int] | None = None


def set_nameserver(address: str | None, port: int = DNS_PORT) -> None:
    global _nameserver
    _nameserver = None if address is None else (address, port)


def nameserver() -> tuple[str, int]:
    return _nameserver or (system_nameserver(), DNS_PORT)


@functools.cache
def system_nameserver() -> str:
    """The first name server of /etc/resolv.conf (read once)."""
    try:
        servers = dns.resolver.Resolver(configure=True).nameservers
    except dns.resolver.NoResolverConfiguration:
        servers = []
    return str(servers[0]) if servers else "127.0.0.1"


@functools.cache
def hosts_file(path: str = HOSTS_FILE) -> dict[str, tuple[str, ...]]:
    """name -> addresses of the hosts file (read once)."""
    found: dict[str, list[str]] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                address, *names = line.split("#", 1)[0].split()
                for name in names if _is_address(address) else ():
                    found.setdefault(name.lower(), []).append(address)
    except (OSError, ValueError):
        return {}
    return {name: tuple(addresses) for name, addresses in found.items()}


def lookup(host: str, deadline: float) -> Generator[Any, Any, list[str]]:
    """The addresses of `host` (a generator of DNS exchanges); raises
    LookupFailed, with the poll's reason, when there are none in time."""
    if _is_address(host):
        return [host]
    if known := hosts_file().get(host.lower()):
        return list(known)
    for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        question = Question(host.rstrip(".") + ".", rdtype)
        try:
            answer = yield DnsQuery(question, *nameserver(), timeout_seconds=left)
        except SocketFailed:
            break
        if answer.reply.rcode() == dns.rcode.NXDOMAIN:
            break
        addresses = answer.reply.answers(rdtype)
        if addresses:
            return addresses
    raise LookupFailed(f"DNS lookup failed for {host}")


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    return True
