"""Human-readable messages (e-mail, Apprise) from a notification's payload.

Payloads are built when the event is queued (version 1 is described in the
README); rendering reads them defensively, so an event kind added later
still renders as its title and message.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.template.loader import render_to_string
from django.utils.dateparse import parse_datetime

from projects.notifications.markdown import render_markdown
from projects.notifications.redaction import redact_url

TITLES = {
    "incident.opened": "DOWN: {name}",
    "incident.resolved": "UP again: {name}",
    "incident.reminder": "Still down: {name}",
    "incident.acknowledged": "Acknowledged: {name}",
    "incident.escalated": "DOWN, nobody has acknowledged: {name}",
    "test": "Test notification",
    "monitor.unreachable": "The monitor cannot reach most of its targets",
    "monitor.reachable": "The monitor reaches its targets again",
    "poller.silent": "The poller is silent",
    "poller.back": "The poller is back",
}
# Certificate and domain incidents are warnings, not outages.
CERTIFICATE_TITLES = {
    "incident.opened": "Certificate expiring: {name}",
    "incident.resolved": "Certificate renewed: {name}",
    "incident.reminder": "Certificate still expiring: {name}",
}
DOMAIN_TITLES = {
    "incident.opened": "Domain expiring: {name}",
    "incident.resolved": "Domain renewed: {name}",
    "incident.reminder": "Domain still expiring: {name}",
}
DEGRADED_TITLES = {
    "incident.opened": "Degraded performance: {name}",
    "incident.resolved": "Fast again: {name}",
    "incident.reminder": "Still degraded: {name}",
}
# Objectives (projects/objectives/alerts.py) name themselves in "title".
DIGEST_TITLES = {
    "incident.opened": "{count} projects down",
    "incident.resolved": "{count} projects up again",
    "incident.escalated": "{count} projects down, nobody has acknowledged",
}


@dataclass(frozen=True, slots=True)
class Rendered:
    subject: str
    text: str
    html: str


def render(payload: dict) -> Rendered:
    context = message_context(payload)
    return Rendered(
        subject=context["title"],
        text=render_to_string("notifications/message.txt", context).strip() + "\n",
        html=render_to_string("notifications/message.html", context),
    )


def message_context(payload: dict) -> dict:
    event = payload.get("event", "")
    return {
        "event": event,
        "title": title(payload),
        "message": payload.get("message", ""),
        "message_html": message_html(payload),
        "project": project_context(payload.get("project") or {}),
        "incident": incident_context(payload.get("incident") or {}),
        "outage": outage_context(payload.get("outage") or {}),
        "items": [item_context(item) for item in digest_items(payload)],
        "links": payload.get("links") or {},
    }


def message_html(payload: dict) -> str:
    """A Markdown message (a status update's) as HTML for the e-mail's
    HTML part, rendered safely; "" for plain text, which the template
    escapes. The text part keeps the Markdown: it reads as plain text."""
    message = payload.get("message") or ""
    if payload.get("message_format") != "markdown" or not message:
        return ""
    return render_markdown(str(message))


def title(payload: dict) -> str:
    if payload.get("title"):  # status pages' messages name themselves
        return str(payload["title"])
    event = payload.get("event", "")
    if event == "digest":
        digest = payload.get("digest") or {}
        template = DIGEST_TITLES.get(digest.get("of"), "{count} notifications")
        return template.format(count=digest.get("count", 0))
    # A flow's incident is named by the step that failed.
    name = (payload.get("incident") or {}).get("title") or (
        payload.get("project") or {}
    ).get("name", "")
    titles = TITLES
    kind = (payload.get("incident") or {}).get("kind")
    if kind == "certificate":
        titles = {**TITLES, **CERTIFICATE_TITLES}
    elif kind == "domain":
        titles = {**TITLES, **DOMAIN_TITLES}
    elif kind == "degraded":
        titles = {**TITLES, **DEGRADED_TITLES}
    return titles.get(event, event or "Notification").format(name=name)


def digest_items(payload: dict) -> list[dict]:
    return (payload.get("digest") or {}).get("events") or []


def item_context(item: dict) -> dict:
    return {
        "project": project_context(item.get("project") or {}),
        "incident": incident_context(item.get("incident") or {}),
        "links": item.get("links") or {},
    }


def project_context(project: dict) -> dict:
    """Payloads queued before URLs were redacted may still hold a
    password or token; the message never shows them."""
    if "url" not in project:
        return project
    return {**project, "url": redact_url(str(project["url"] or ""))}


# (since, error) labels of an incident's kind.
DOWNTIME_LABELS = ("Down since", "First error")
LABELS = {
    "certificate": ("Warned", "Warning"),
    "domain": ("Warned", "Warning"),
    "degraded": ("Slow since", "Limit"),
}


def incident_context(incident: dict) -> dict:
    seconds = incident.get("duration_seconds")
    since_label, error_label = LABELS.get(incident.get("kind"), DOWNTIME_LABELS)
    return {
        **incident,
        "started": _parsed(incident.get("started_at")),
        "since_label": since_label,
        "error_label": error_label,
        "resolved": _parsed(incident.get("resolved_at")),
        "duration": None if seconds is None else duration_text(seconds),
    }


OUTAGE_FIELDS = ("id", "kind", "started_at", "ended_at", "duration_seconds")


def outage_context(outage: dict) -> dict:
    """The monitor's own outage (monitor.*, poller.* events): when, how
    long, and whatever details came with it."""
    if not outage:
        return {}
    seconds = outage.get("duration_seconds")
    details = {k: v for k, v in outage.items() if k not in OUTAGE_FIELDS}
    return {
        "started": _parsed(outage.get("started_at")),
        "ended": _parsed(outage.get("ended_at")),
        "duration": None if seconds is None else duration_text(seconds),
        "details": [(k.replace("_", " ").capitalize(), v) for k, v in details.items()],
    }


def duration_text(seconds: float) -> str:
    """ "45 s", "12 min", "3 h 5 min", "2 d 4 h"."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes} min"
    if days < 1:
        return f"{hours} h {minutes % 60} min"
    return f"{days} d {hours % 24} h"


def _parsed(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None
