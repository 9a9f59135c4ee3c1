"""Domain incidents: warn once per expiry date, resolve when it moves.

After each lookup run, for every project watching a domain:

| the registry's date (last known)        | open incident | then                      |
| --------------------------------------- | ------------- | ------------------------- |
| within the project's warning days       | none          | open one, notify          |
|   (or past), not yet warned of          |               |                           |
| the one the open incident warned of     | yes           | nothing                   |
| another (the domain was renewed)        | yes           | resolve it, notify; open  |
|                                         |               | a new one if the new date |
|                                         |               | is within the days too    |
| none known yet (never answered)         | any           | nothing                   |

A project that stops watching the domain (warning off, another host
name, a heartbeat now) has its incident resolved ("not watched any
more"), at its save (receivers.py) or here. A date already warned of is
never warned of again for that project, so a registry that flips between
two dates does not flap. A paused project is not warned (nobody looks at
it), but its incident is resolved when the date moves.

One open incident per project and kind is a partial unique constraint
(Incident); runs are serialised by a lock taken in their transaction, and
the outbox's unique keys make a notification once per event and channel.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from projects.domains.watched import Watcher, watchers
from projects.models import DomainRegistration, Incident, Notification, Project
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload

Event = Notification.Event
DOMAIN = Incident.Kind.DOMAIN
# Any constant will do; it only has to be the same in every process.
_WARNING_LOCK = 0xD0A1E


@dataclass
class WarningLedger:
    opened: list[Incident] = field(default_factory=list)
    resolved: list[Incident] = field(default_factory=list)
    # {incident id: what its resolution notice says}
    sentences: dict[int, str] = field(default_factory=dict)

    def __str__(self) -> str:
        opened, resolved = len(self.opened), len(self.resolved)
        return f"domain warnings: {opened} opened, {resolved} resolved"


def warn_of_domains(now: datetime | None = None) -> WarningLedger:
    """Open and resolve domain incidents from the registrations known now,
    and keep each project's copy of its domain's date."""
    now = now or timezone.now()
    ledger = WarningLedger()
    with transaction.atomic():
        _lock()
        watching = {w.project_id: w for w in watchers()}
        dates = dict(DomainRegistration.objects.values_list("domain", "expires_at"))
        _copy_dates(watching.values(), dates)
        current = _open_incidents()
        for incident in current.values():
            _resolve_if_moved(
                incident, watching.get(incident.project_id), dates, now, ledger
            )
        still_open = {i.project_id for i in current.values() if i.resolved_at is None}
        warned = _warned(watching.values())
        for watcher in watching.values():
            expires_at = dates.get(watcher.domain)
            if watcher.project_id in still_open or not _worth_warning(
                watcher, expires_at, warned, now
            ):
                continue
            ledger.opened.append(_new_incident(watcher, expires_at, now))
        _save(ledger)
    return ledger


def resolve_unwatched(
    project: Project, domain: str | None, at: datetime
) -> Incident | None:
    """Resolve the project's open domain incident when it is not about
    `domain` (the one the project watches now; None: none). Returns the
    incident resolved, or None."""
    incident = (
        Incident.objects.filter(project=project, kind=DOMAIN, resolved_at=None)
        .exclude(domain=domain or "")
        .select_related("acknowledged_by")
        .first()
    )
    if incident is None:
        return None
    incident.project = project  # as saved: its name may have changed too
    incident.resolved_at = at
    incident.save(update_fields=["resolved_at", "updated_at"])
    sentence = _unwatched_sentence(incident)
    outbox.queue_for_audience([_message(Event.RESOLVED, incident, at, sentence)])
    return incident


def expiry_text(domain: str, expires_at: datetime, now: datetime) -> str:
    """ "domain example.com expires in 5 days (2026-12-04 12:00 UTC)", or
    "domain example.com expired on ..." """
    left = expires_at - now
    when = f"{expires_at:%Y-%m-%d %H:%M} UTC"
    if left <= timedelta(0):
        return f"domain {domain} expired on {when}"
    if left < timedelta(days=1):
        return f"domain {domain} expires in {left.seconds // 3600} h ({when})"
    days = round(left / timedelta(days=1))
    plural = "s" if days != 1 else ""
    return f"domain {domain} expires in {days} day{plural} ({when})"


def _lock() -> None:
    """Serialise runs. SQLite transactions here are IMMEDIATE and already
    hold the write lock; PostgreSQL needs an explicit lock, held until the
    transaction ends."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_WARNING_LOCK])


def _copy_dates(watching, dates: dict[str, datetime | None]) -> None:
    """Project.domain_expires_at := its domain's date, where it differs:
    one UPDATE per distinct date."""
    changed: dict[datetime | None, list[int]] = defaultdict(list)
    for watcher in watching:
        expires_at = dates.get(watcher.domain) if watcher.domain else None
        if watcher.shown_expiry != expires_at:
            changed[expires_at].append(watcher.project_id)
    for expires_at, ids in changed.items():
        for start in range(0, len(ids), 500):
            Project.objects.filter(pk__in=ids[start : start + 500]).update(
                domain_expires_at=expires_at
            )


def _open_incidents() -> dict[int, Incident]:
    incidents = Incident.objects.filter(kind=DOMAIN, resolved_at=None).select_related(
        "project", "acknowledged_by"
    )
    return {incident.project_id: incident for incident in incidents}


def _resolve_if_moved(
    incident: Incident,
    watcher: Watcher | None,
    dates: dict[str, datetime | None],
    now: datetime,
    ledger: WarningLedger,
) -> None:
    if watcher is None or watcher.domain != incident.domain:
        sentence = _unwatched_sentence(incident)
    else:
        expires_at = dates.get(watcher.domain)
        if expires_at is None or expires_at == incident.domain_expires_at:
            return  # the same date, or nothing known: the warning stands
        sentence = (
            f"{incident.project.name}: {incident.domain} is renewed, now until "
            f"{expires_at:%Y-%m-%d %H:%M} UTC."
        )
    incident.resolved_at = now
    incident.updated_at = now
    ledger.resolved.append(incident)
    ledger.sentences[incident.pk] = sentence


def _warned(watching) -> set[tuple]:
    """(project id, domain, expiry) of the dates already warned of."""
    rows = Incident.objects.filter(
        kind=DOMAIN, project_id__in=[w.project_id for w in watching]
    ).values_list("project_id", "domain", "domain_expires_at")
    return set(rows)


def _worth_warning(
    watcher: Watcher, expires_at: datetime | None, warned: set, now: datetime
) -> bool:
    return (
        watcher.enabled
        and watcher.domain is not None
        and expires_at is not None
        and expires_at - now < timedelta(days=watcher.warning_days)
        and (watcher.project_id, watcher.domain, expires_at) not in warned
    )


def _new_incident(watcher: Watcher, expires_at: datetime, now: datetime) -> Incident:
    text = expiry_text(watcher.domain, expires_at, now)
    return Incident(
        project_id=watcher.project_id,
        kind=DOMAIN,
        started_at=now,
        confirmed_at=now,
        first_error=text,
        last_error=text,
        domain=watcher.domain,
        domain_expires_at=expires_at,
    )


def _save(ledger: WarningLedger) -> None:
    Incident.objects.bulk_update(ledger.resolved, ["resolved_at", "updated_at"])
    created = Incident.objects.bulk_create(ledger.opened)
    # Their project (name, URL) for the payloads, in one query.
    ledger.opened = list(
        Incident.objects.filter(pk__in=[i.pk for i in created]).select_related(
            "project", "acknowledged_by"
        )
    )
    outbox.queue_for_audience(
        [
            _message(Event.RESOLVED, i, i.resolved_at, ledger.sentences[i.pk])
            for i in ledger.resolved
        ]
    )
    outbox.queue_for_projects(
        [
            _message(Event.OPENED, i, i.confirmed_at, _opened_sentence(i))
            for i in ledger.opened
        ]
    )


def _message(
    event: str, incident: Incident, at: datetime, sentence: str
) -> outbox.Message:
    payload = incident_payload(event, incident, occurred_at=at)
    payload["message"] = sentence
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload=payload,
        project_id=incident.project_id,
        incident_id=incident.pk,
    )


def _opened_sentence(incident: Incident) -> str:
    return (
        f"{incident.project.name}: the {incident.first_error}. "
        "Renew it at its registrar."
    )


def _unwatched_sentence(incident: Incident) -> str:
    return (
        f"{incident.project.name}: the registration of {incident.domain} "
        "is not watched any more."
    )
