"""Networks a poll may not connect to (POLL_BLOCKED_NETWORKS): checked on
the address libcurl is about to connect to, after every name lookup and
for every redirect, so neither a name that resolves there nor a redirect
that leads there gets through.

The save-time check (projects/checks/blocked_targets.py) cannot import this (the
projects app never imports polling): it repeats the few lines of matching.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence

import pycurl

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """Raises ValueError naming the first value that is not a network."""
    return tuple(
        ipaddress.ip_network(value.strip(), strict=False)
        for value in values
        if value.strip()
    )


def blocked_network(address: Address, networks: Sequence[Network]) -> Network | None:
    """The network among `networks` holding `address` (an IPv4 address
    mapped into IPv6 counts as itself), or None."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    for network in networks:
        if address.version == network.version and address in network:
            return network
    return None


def first_allowed(
    addresses: Sequence[str], networks: Sequence[Network], *, trusted: bool
) -> tuple[str | None, str]:
    """The first of `addresses` an untrusted poll may reach, and "" ; or
    None and the reason none may be (the kinds on the poller's own
    sockets, which libcurl's socket guard does not see)."""
    refused = ""
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%")[0])
        if trusted or blocked_network(ip, networks) is None:
            return text, ""
        refused = refused or str(ip)
    return None, f"{refused} is in a blocked network (POLL_BLOCKED_NETWORKS)"


class Taint:
    """Whether a trusted poll has opened a connection to a blocked network
    on the handles sharing one connection cache (a worker thread's). From
    then on, their untrusted polls never reuse a cached connection: reusing
    it would reach the blocked address without opening a socket."""

    def __init__(self) -> None:
        self.opened_blocked = False


class SocketGuard:
    """libcurl's OPENSOCKETFUNCTION for one handle: opens the socket, or
    refuses (libcurl then fails with "could not connect") when the address
    is in a blocked network and the request in hand is not trusted."""

    def __init__(self, networks: Sequence[Network], taint: Taint | None = None) -> None:
        self.networks = tuple(networks)
        self.taint = taint or Taint()
        self.guarding = True
        self.refused: str = ""

    @property
    def fresh_connection_needed(self) -> bool:
        return self.guarding and self.taint.opened_blocked

    def install(self, curl: pycurl.Curl) -> None:
        if self.networks:
            curl.setopt(pycurl.OPENSOCKETFUNCTION, self.open_socket)

    def reset(self, *, trusted: bool) -> None:
        self.guarding = not trusted
        self.refused = ""

    def open_socket(self, purpose, address):
        family, socktype, protocol, peer = address
        if self.guarding and family in (socket.AF_INET, socket.AF_INET6):
            ip = ipaddress.ip_address(peer[0].split("%")[0])
            if blocked_network(ip, self.networks) is not None:
                self.refused = str(ip)
                return pycurl.SOCKET_BAD
        elif family in (socket.AF_INET, socket.AF_INET6):
            ip = ipaddress.ip_address(peer[0].split("%")[0])
            if blocked_network(ip, self.networks) is not None:
                self.taint.opened_blocked = True
        return socket.socket(family, socktype, protocol)
