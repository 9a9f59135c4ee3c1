"""Webhooks: a JSON POST signed per the Standard Webhooks spec, through
the blocked-networks guard when the channel has one (outbound_guard.py)."""

from __future__ import annotations

import json
import time

import httpx

from projects.notifications.outbound_guard import Refused, guarded_client
from projects.notifications.outgoing import DeliveryError, Outgoing, Sent
from projects.notifications.signing import signed_headers

# 408 and 429 say "later", not "never".
RETRYABLE_CLIENT_ERRORS = {408, 429}
USER_AGENT = "uptime-monitor-webhook/1"


def send(outgoing: Outgoing, *, timeout: float, now=time.time) -> Sent:
    body = json.dumps(outgoing.payload, separators=(",", ":")).encode()
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        **signed_headers(outgoing.secret, outgoing.key, int(now()), body),
    }
    try:
        with guarded_client(outgoing.guard, timeout=timeout) as client:
            response = client.post(outgoing.url, content=body, headers=headers)
    except Refused as refused:
        raise DeliveryError(refused.reason, permanent=True) from None
    except httpx.TimeoutException:
        raise DeliveryError(f"timed out after {timeout:g} s") from None
    except httpx.HTTPError as error:
        raise DeliveryError(_transport_reason(error)) from None
    return _classify(response)


def _classify(response: httpx.Response) -> Sent:
    status = response.status_code
    if 200 <= status < 300:
        return Sent(http_status=status)
    permanent = 300 <= status < 500 and status not in RETRYABLE_CLIENT_ERRORS
    raise DeliveryError(
        f"HTTP {status} {response.reason_phrase}".strip(),
        http_status=status,
        permanent=permanent,
        retry_after=response.headers.get("retry-after"),
    )


def _transport_reason(error: httpx.HTTPError) -> str:
    """A short reason without the URL, which may carry a token."""
    if isinstance(error, httpx.ConnectError):
        return "connection failed"
    if isinstance(error, httpx.RemoteProtocolError):
        return "invalid HTTP response"
    return type(error).__name__
