"""The RDAP requests: plain HTTPS GETs for JSON, each through the
blocked-networks guard the channels use (outbound_guard.py), so a
bootstrap file or a redirect naming an internal address is refused where
the connection is opened, whatever the name resolves to.

Every failure becomes a LookupFailed whose reason names the server's
host (registries are public; nothing secret is in these URLs), never a
traceback: one bad registry must not stop the lookups of the others.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import httpx

from django.conf import settings

from projects.domains.errors import LookupFailed
from projects.notifications.outbound_guard import Guard, Refused, guarded_client

TIMEOUT_SECONDS = 10.0
# An RDAP answer is a few kilobytes, the bootstrap file some 30 KB: more
# than this is not an answer worth parsing.
MAX_ANSWER_BYTES = 2 * 1024 * 1024
HEADERS = {
    "accept": "application/rdap+json, application/json;q=0.9",
    "user-agent": "uptime-monitor-rdap/1",
}
# Registries say "later" with these; anything else 4xx is their answer.
RETRYABLE_STATUSES = {408, 429}


def rdap_client(*, timeout: float = TIMEOUT_SECONDS) -> httpx.Client:
    """A client for one lookup run. With no blocked networks set there is
    nothing to guard, and proxies from the environment are honoured."""
    blocked = settings.POLL_BLOCKED_NETWORKS
    return guarded_client(Guard.of(blocked) if blocked else None, timeout=timeout)


def get_json(client: httpx.Client, url: str, *, not_found: str) -> object:
    """The JSON document at `url`; raises LookupFailed saying why not
    (`not_found`, after the host's name, for a 404)."""
    host = urlsplit(url).hostname or url
    try:
        with client.stream("GET", url, headers=HEADERS, follow_redirects=True) as r:
            _check_status(r, host, not_found)
            body = _read_limited(r, host)
    except Refused as refused:
        raise LookupFailed(f"{host} was not asked: {refused.reason}") from None
    except httpx.TimeoutException:
        raise LookupFailed(
            f"{host} did not answer within {client.timeout.read:g} s",
            unreachable=True,
        ) from None
    except httpx.HTTPError as error:
        raise LookupFailed(
            f"{host}: {_transport_reason(error)}",
            unreachable=isinstance(error, httpx.ConnectError),
        ) from None
    try:
        return json.loads(body)
    except ValueError:
        raise LookupFailed(f"{host} answered with something that is not JSON") from None


def _check_status(response: httpx.Response, host: str, not_found: str) -> None:
    status = response.status_code
    if status == 404:
        raise LookupFailed(f"{host} {not_found} (404)", permanent=True)
    if status >= 400:
        permanent = status < 500 and status not in RETRYABLE_STATUSES
        raise LookupFailed(
            f"{host} answered {status} {response.reason_phrase}".rstrip(),
            permanent=permanent,
        )


def _read_limited(response: httpx.Response, host: str) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise LookupFailed(
                f"{host} answered more than {MAX_ANSWER_BYTES // 1024 // 1024} MiB"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _transport_reason(error: httpx.HTTPError) -> str:
    """ "connection refused", not "[Errno 111] Connection refused"."""
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(error)).strip()
    if isinstance(error, httpx.ConnectError):
        return f"cannot connect ({text.lower() or 'connection failed'})"
    if isinstance(error, httpx.TooManyRedirects):
        return "too many redirects"
    return text or type(error).__name__
