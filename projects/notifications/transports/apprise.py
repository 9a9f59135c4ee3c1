"""Apprise: Slack, Discord, Telegram, ntfy, ... through one URL.

A fresh Apprise() per delivery: a reused instance throttles (sleeps)
between sends. The URL carries tokens, so nothing here logs it, and
Apprise's own log lines are kept out of the reason.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import apprise as apprise_lib

from projects.notifications.messages import render
from projects.notifications.outgoing import DeliveryError, Outgoing, Sent

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
    notifier = apprise_lib.Apprise()
    if not notifier.add(with_timeouts(outgoing.url, timeout)):
        raise DeliveryError("Apprise does not understand this URL", permanent=True)
    rendered = render(outgoing.payload)
    result = notifier.notify(
        body=rendered.text,
        title=rendered.subject,
        notify_type=notify_type(outgoing.payload),
        timeout=timeout * 2,
    )
    if not result:
        raise DeliveryError(f"Apprise could not send ({result.status.name.lower()})")
    return Sent()


def is_understood(url: str) -> bool:
    """Whether Apprise has a service for this URL (no network involved)."""
    return apprise_lib.Apprise.instantiate(url) is not None


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
