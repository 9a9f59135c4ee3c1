"""Secrets shown masked: channel URLs (enough to recognise the
destination, never the token in its path, query, password or, for the
services whose "host" is a token, the host), project request headers (the
names, not the values) and the links in a stored notification."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

MASK = "•••"
# A host name as DNS writes it, ending in a label of letters (a TLD), so
# that a token in an Apprise URL's host position (tgram://123:ABC/…,
# ntfy://topic, discord://id/token) is never taken for one.
HOST_NAME = re.compile(
    r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}", re.IGNORECASE
)
# Payload keys whose values are capabilities (a subscriber's confirm and
# unsubscribe links carry its token; an acknowledge link acknowledges).
SECRET_PAYLOAD_KEYS = {"links", "token", "acknowledge_url"}


def masked_url(kind: str, url: str) -> str:
    if not url:
        return ""
    if kind == "email":
        return url  # addresses are who gets told, not a credential
    if kind == "apprise":
        return _masked_apprise(url)
    return _masked_http(url)


def masked_email(addresses: str) -> str:
    """An address list shown to someone who must not learn it (a read key
    looking at a subscriber's channel): the domains only."""
    return ", ".join(
        f"{MASK}@{address.rpartition('@')[2]}" if "@" in address else MASK
        for address in (part.strip() for part in addresses.split(","))
        if address
    )


def _masked_http(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    rest = MASK if (parts.path.strip("/") or parts.query) else ""
    return f"{parts.scheme}://{host}/{rest}"


def _masked_apprise(url: str) -> str:
    """The scheme, and the host when it is a host name or an address;
    everything else (user, password, path, query) is masked. Apprise's own
    privacy rendering is not used: it prints header values, query tokens
    and secret paths in clear (S4-04)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return f"{url.partition(':')[0]}://{MASK}"
    scheme = parts.scheme or url.partition(":")[0]
    if not _is_host(host):
        return f"{scheme}://{MASK}"
    if ":" in host:
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    hidden = parts.path.strip("/") or parts.query or parts.username or parts.password
    return f"{scheme}://{host}/{MASK if hidden else ''}"


def _is_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(HOST_NAME.fullmatch(host))
    return True


def masked_secret(secret: str) -> str:
    """Only the Standard Webhooks prefix, which every such secret shares."""
    if not secret:
        return ""
    return f"whsec_{MASK}" if secret.startswith("whsec_") else MASK


def masked_headers(headers: dict | None) -> dict:
    """A project's request headers by name, every value masked: they often
    carry a token (Authorization, X-Api-Key)."""
    return dict.fromkeys(headers or {}, MASK)


def masked_payload(payload: object) -> object:
    """A notification's payload with its capabilities (links, tokens)
    masked, at any depth."""
    if isinstance(payload, dict):
        return {
            key: _masked_value(value)
            if key in SECRET_PAYLOAD_KEYS
            else masked_payload(value)
            for key, value in payload.items()
        }
    if isinstance(payload, list):
        return [masked_payload(item) for item in payload]
    return payload


def _masked_value(value: object) -> object:
    if isinstance(value, dict):
        return dict.fromkeys(value, MASK)
    return MASK if value else value
