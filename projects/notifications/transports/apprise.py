"""Apprise: Slack, Discord, Telegram, ntfy, ... through one URL.

A fresh Apprise() per delivery: a reused instance throttles (sleeps)
between sends. The URL carries tokens, so nothing here logs it, and
Apprise's own log lines are kept out of the reason.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import apprise as apprise_lib

from projects.notifications.messages import render
from projects.notifications.outbound_guard import guarding_urllib3, sends_over_http
from projects.notifications.outgoing import DeliveryError, Outgoing, Sent

NOT_HTTP = (
    "this team's Apprise channels may use only services that send over HTTP "
    "(POLL_BLOCKED_NETWORKS)"
)

NOTIFY_TYPES = {
    "incident.opened": apprise_lib.NotifyType.FAILURE,
    "incident.reminder": apprise_lib.NotifyType.WARNING,
    "incident.resolved": apprise_lib.NotifyType.SUCCESS,
    "monitor.unreachable": apprise_lib.NotifyType.FAILURE,
    "poller.silent": apprise_lib.NotifyType.FAILURE,
    "monitor.reachable": apprise_lib.NotifyType.SUCCESS,
    "poller.back": apprise_lib.NotifyType.SUCCESS,
}


def send(outgoing: Outgoing, *, timeout: float) -> Sent:
    # Sent on this thread (no async_mode), where the guard watches urllib3.
    asset = apprise_lib.AppriseAsset(async_mode=False)
    notifier = apprise_lib.Apprise(asset=asset)
    service = apprise_lib.Apprise.instantiate(
        with_timeouts(outgoing.url, timeout), asset=asset
    )
    if service is None or not notifier.add(service):
        raise DeliveryError("Apprise does not understand this URL", permanent=True)
    if outgoing.guard is not None and not sends_over_http(service):
        raise DeliveryError(NOT_HTTP, permanent=True)
    rendered = render(outgoing.payload)
    with guarding_urllib3(outgoing.guard) as watch:
        result = notifier.notify(
            body=rendered.text,
            title=rendered.subject,
            notify_type=notify_type(outgoing.payload),
            timeout=timeout * 2,
        )
    if watch.refused:
        raise DeliveryError(watch.refused, permanent=True)
    if not result:
        raise DeliveryError(f"Apprise could not send ({result.status.name.lower()})")
    return Sent()


def is_understood(url: str) -> bool:
    """Whether Apprise has a service for this URL (no network involved)."""
    return apprise_lib.Apprise.instantiate(url) is not None


def is_http_service(url: str) -> bool:
    """Whether Apprise sends this URL's messages over HTTP (no network)."""
    service = apprise_lib.Apprise.instantiate(url)
    return service is not None and sends_over_http(service)


def notify_type(payload: dict) -> str:
    event = payload.get("event", "")
    if event == "digest":
        event = (payload.get("digest") or {}).get("of", "")
    return NOTIFY_TYPES.get(event, apprise_lib.NotifyType.INFO)


def with_timeouts(url: str, timeout: float) -> str:
    """The URL with Apprise's connect (cto) and read (rto) timeouts, unless
    it sets them itself."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.setdefault("cto", f"{min(timeout, 5):g}")
    query.setdefault("rto", f"{timeout:g}")
    return urlunsplit(parts._replace(query=urlencode(query)))
