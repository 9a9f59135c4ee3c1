"""The save-time half of POLL_BLOCKED_NETWORKS: a project of an untrusted
team may not name an address in a blocked network. Only addresses written
in the URL are checked here (a name lookup in a web request would be slow
and proves nothing: the name may resolve elsewhere at poll time); the
poller refuses the connection itself, names and redirects included
(polling/engine/blocked.py, whose matching these few lines repeat: the
projects app never imports polling)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

BLOCKED = (
    "{address} is in a blocked network ({network}): this team's checks may "
    "not reach it (POLL_BLOCKED_NETWORKS)."
)


def blocked_url_problem(url: str) -> str:
    """Why `url` may not be polled by an untrusted team, or ""."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return ""  # the URL validators say what is wrong
    address = literal_address(host or "")
    if address is None:
        return ""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    for value in settings.POLL_BLOCKED_NETWORKS:
        network = ipaddress.ip_network(value, strict=False)
        if address.version == network.version and address in network:
            return BLOCKED.format(address=address, network=network)
    return ""


def apprise_blocked_problem(url: str) -> str:
    """As blocked_url_problem, for an Apprise URL: only a host written as
    a plain address counts (many services put a token where the host goes,
    and 123456 would read as 0.1.226.64)."""
    try:
        host = urlsplit(url).hostname or ""
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return ""
    return blocked_url_problem(url)


def literal_address(host: str):
    """The address a host written as one means, in any form libcurl takes
    (169.254.169.254, 2852039166, 0xa9fea9fe, [fe80::1]), or None."""
    try:
        return ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None
