"""Where a kind on the poller's own sockets (ssh, udp) connects: the
URL's host looked up without blocking (engine/lookup.py), the first
address the poll may reach (engine/blocked.py), and the port."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any
from urllib.parse import urlsplit

from polling.engine.blocked import first_allowed
from polling.engine.lookup import LookupFailed, lookup
from polling.engine.transport import Transport
from polling.engine.types import Target


class Unreachable(Exception):
    """`reason` is the poll's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def host_and_port(target: Target, default_port: int | None) -> tuple[str, int]:
    """Raises Unreachable when the URL names no host, or no port and the
    kind has no default."""
    try:
        parts = urlsplit(target.url)
        host, port = parts.hostname, parts.port or default_port
    except ValueError:
        host = port = None
    if not (host and port):
        raise Unreachable(f"invalid URL: {target.url}")
    return host, port


def address_of(
    handle: Transport, target: Target, host: str, deadline: float
) -> Generator[Any, Any, str]:
    """The address to reach `host` at; raises Unreachable."""
    try:
        addresses = yield from lookup(host, deadline)
    except LookupFailed as failed:
        raise Unreachable(failed.reason) from None
    address, refused = first_allowed(
        addresses, handle.blocked_networks, trusted=target.trusted
    )
    if address is None:
        raise Unreachable(refused)
    return address
