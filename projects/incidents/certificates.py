"""The result writer's certificate step: warn once per certificate.

A certificate seen within its project's `tls_expiry_warning_days` of
expiring opens a certificate incident (distinct from downtime) and queues
its notification. A different certificate seen later (a renewal) resolves
it, and opens a new incident only if that one expires soon too. An
incident remembers its certificate's expiry, so a certificate already
warned of is never warned of again, even when a load balancer flips
between an old certificate and a renewed one. A project whose URL leaves
https meets no certificate any more: saving it resolves its open
incident, with its own wording (resolve_left_https()).

It runs in the writer's transaction after the project-state step, whose
row locks serialise writers per project; the partial unique constraint
(one open incident per project and kind) backs that up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from projects.models import Incident, Notification, Project
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload

Event = Notification.Event
CERTIFICATE = Incident.Kind.CERTIFICATE


@dataclass(frozen=True, slots=True)
class Sighting:
    """A poll of `project_id` at `at` found a certificate expiring at
    `expires_at`."""

    project_id: int
    at: datetime
    expires_at: datetime


@dataclass
class CertificateLedger:
    opened: list[Incident] = field(default_factory=list)
    resolved: list[Incident] = field(default_factory=list)


def record_certificates(sightings: Iterable[Sighting]) -> CertificateLedger:
    """Open and resolve certificate incidents for the batch's sightings
    (the latest per project counts) and queue what people must hear."""
    latest = _latest_per_project(sightings)
    ledger = CertificateLedger()
    if not latest:
        return ledger
    projects = _watching(latest)
    current = _open_incidents(latest)
    warned = _warned(latest.values())
    for sighting in latest.values():
        project = projects.get(sighting.project_id)
        incident = current.get(sighting.project_id)
        if incident and incident.certificate_expires_at != sighting.expires_at:
            incident.resolved_at = sighting.at  # a renewed certificate
            incident.updated_at = timezone.now()
            ledger.resolved.append(incident)
            incident = None
        if incident is None and _worth_warning(sighting, project, warned):
            ledger.opened.append(_new_incident(project, sighting))
    _save(ledger)
    return ledger


def resolve_left_https(project: Project, at: datetime) -> Incident | None:
    """Resolve the project's open certificate incident, its URL being no
    longer https: no poll will meet that certificate again. Returns the
    incident, or None when none was open."""
    incident = (
        Incident.objects.filter(project=project, kind=CERTIFICATE, resolved_at=None)
        .select_related("acknowledged_by")
        .first()
    )
    if incident is None:
        return None
    incident.project = project  # as saved: its name may have changed too
    incident.resolved_at = at
    incident.save(update_fields=["resolved_at", "updated_at"])
    sentence = (
        f"{project.name} is no longer polled over https: its certificate is "
        "not watched any more."
    )
    outbox.queue_for_audience(
        [_message(Event.RESOLVED, incident, at, sentence=sentence)]
    )
    return incident


def resolve_when_https_left(sender, instance: Project, created: bool, **kwargs) -> None:
    """post_save of Project (connected in ProjectsConfig.ready): a project
    saved with a URL that is no longer https has its certificate incident
    resolved, in the transaction that stores the new URL when the save runs
    in one (the admin's and the API's do). A receiver, not a call from
    Project.save(), so the models never import the incidents package."""
    if not created and not instance.reads_certificate:
        resolve_left_https(instance, timezone.now())


def _worth_warning(sighting: Sighting, project: Project | None, warned: set) -> bool:
    return (
        project is not None
        and (sighting.project_id, sighting.expires_at) not in warned
        and expires_soon(sighting, project.tls_expiry_warning_days)
    )


def expires_soon(sighting: Sighting, warning_days: int) -> bool:
    window = timedelta(days=warning_days)
    return warning_days > 0 and sighting.expires_at - sighting.at < window


def expiry_text(expires_at: datetime, now: datetime) -> str:
    """ "certificate expires in 5 days (2026-11-27 12:00 UTC)", or "expired"."""
    left = expires_at - now
    when = f"{expires_at:%Y-%m-%d %H:%M} UTC"
    if left <= timedelta(0):
        return f"certificate expired on {when}"
    if left < timedelta(days=1):
        return f"certificate expires in {left.seconds // 3600} h ({when})"
    days = round(left / timedelta(days=1))
    return f"certificate expires in {days} day{'s' if days != 1 else ''} ({when})"


def _latest_per_project(sightings: Iterable[Sighting]) -> dict[int, Sighting]:
    latest: dict[int, Sighting] = {}
    for sighting in sightings:
        known = latest.get(sighting.project_id)
        if known is None or sighting.at >= known.at:
            latest[sighting.project_id] = sighting
    return latest


def _watching(latest: dict[int, Sighting]) -> dict[int, Project]:
    """The projects that warn of certificates (still there, warning on)."""
    return (
        Project.objects.filter(pk__in=list(latest), tls_expiry_warning_days__gt=0)
        .only("id", "name", "url", "tls_expiry_warning_days")
        .in_bulk()
    )


def _open_incidents(latest: dict[int, Sighting]) -> dict[int, Incident]:
    incidents = Incident.objects.filter(
        kind=CERTIFICATE, resolved_at=None, project_id__in=list(latest)
    ).select_related("project", "acknowledged_by")
    return {incident.project_id: incident for incident in incidents}


def _warned(sightings: Iterable[Sighting]) -> set[tuple]:
    """(project id, expiry) of the certificates already warned of."""
    sightings = list(sightings)
    rows = Incident.objects.filter(
        kind=CERTIFICATE,
        project_id__in=[s.project_id for s in sightings],
        certificate_expires_at__in=[s.expires_at for s in sightings],
    ).values_list("project_id", "certificate_expires_at")
    return set(rows)


def _new_incident(project: Project, sighting: Sighting) -> Incident:
    text = expiry_text(sighting.expires_at, sighting.at)
    return Incident(
        project=project,
        kind=CERTIFICATE,
        started_at=sighting.at,
        confirmed_at=sighting.at,
        first_error=text,
        last_error=text,
        certificate_expires_at=sighting.expires_at,
    )


def _save(ledger: CertificateLedger) -> None:
    Incident.objects.bulk_update(ledger.resolved, ["resolved_at", "updated_at"])
    Incident.objects.bulk_create(ledger.opened)
    outbox.queue_for_audience(
        [_message(Event.RESOLVED, i, i.resolved_at) for i in ledger.resolved]
    )
    outbox.queue_for_projects(
        [_message(Event.OPENED, i, i.confirmed_at) for i in ledger.opened]
    )


def _message(
    event: str, incident: Incident, at: datetime, *, sentence: str = ""
) -> outbox.Message:
    payload = incident_payload(event, incident, occurred_at=at)
    payload["message"] = sentence or _sentence(event, incident)
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload=payload,
        project_id=incident.project_id,
        incident_id=incident.pk,
    )


def _sentence(event: str, incident: Incident) -> str:
    name = incident.project.name
    if event == Event.RESOLVED:
        return f"{name} serves a renewed certificate."
    return f"The TLS {incident.first_error} for {name}."
