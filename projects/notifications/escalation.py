"""Escalation: an outage nobody acknowledges reaches more channels.

Each minute the tasks process fires the escalation steps that are due: a
step of the incident's project whose `delay_minutes` have passed since the
incident was confirmed, while the incident is open and unacknowledged.
Firing a step queues incident.escalated for its channels and writes an
Escalation row in one transaction; the row is unique per incident and
step, so a repeated run, a restart or a second tasks process neither loses
nor repeats a step. The escalated channels count as told: they hear of
the acknowledgement and the recovery like the project's own channels.

Not escalated: an acknowledged incident (someone is on it), a project
under maintenance (its step fires when the window ends, if still due),
an incident whose opening is held because the monitor itself is cut off,
and certificate warnings (nobody is paged about an expiry weeks away).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import Escalation, EscalationStep, Incident, Notification
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload

ESCALATED = Notification.Event.ESCALATED


def queue_escalations(*, now: Callable[[], datetime] = timezone.now) -> int:
    """Fires the steps due now; returns how many fired."""
    current = now()
    return sum(fire(incident, step, current) for incident, step in due(current))


def due(now: datetime) -> Iterator[tuple[Incident, EscalationStep]]:
    """(incident, step) pairs whose time has come and that have not fired."""
    incidents = list(_escalating(now))
    if not incidents:
        return
    steps = defaultdict(list)
    for step in EscalationStep.objects.filter(
        project_id__in={i.project_id for i in incidents}
    ).prefetch_related("channels"):
        steps[step.project_id].append(step)
    fired = set(
        Escalation.objects.filter(incident__in=incidents).values_list(
            "incident_id", "step_id"
        )
    )
    for incident in incidents:
        for step in steps[incident.project_id]:
            if (incident.pk, step.pk) in fired:
                continue
            if incident.confirmed_at + timedelta(minutes=step.delay_minutes) <= now:
                yield incident, step


def _escalating(now: datetime):
    """Open, unacknowledged downtime incidents of projects with steps, not
    under maintenance, whose opening is not held."""
    incidents = Incident.objects.filter(
        kind=Incident.Kind.DOWNTIME,
        resolved_at=None,
        acknowledged_at=None,
        project__escalation_steps__isnull=False,
    ).exclude(pk__in=_held_openings())
    maintained = MaintenanceSchedule.load(now, now).covered_projects(now)
    if maintained is None:
        return Incident.objects.none()
    if maintained:
        incidents = incidents.exclude(project_id__in=maintained)
    return incidents.distinct().select_related("project")


def _held_openings():
    held = Notification.objects.filter(
        event=Notification.Event.OPENED, state=Notification.State.HELD
    )
    return held.exclude(incident=None).values("incident_id")


def fire(incident: Incident, step: EscalationStep, now: datetime) -> int:
    """Fires one step for one incident; 1 when this call fired it, 0 when
    it had fired already or the incident was acknowledged or resolved
    meanwhile."""
    with transaction.atomic():
        # Holds off an acknowledgement or the recovery until this commits;
        # one that came first leaves nothing to lock.
        still_open = list(
            Incident.objects.select_for_update()
            .filter(pk=incident.pk, resolved_at=None, acknowledged_at=None)
            .values_list("pk", flat=True)
        )
        if not still_open:
            return 0
        _, created = Escalation.objects.get_or_create(
            incident=incident, step=step, defaults={"fired_at": now}
        )
        if not created:
            return 0
        outbox.queue([(_message(incident, step, now), _channel_ids(step))])
    return 1


def _message(incident: Incident, step: EscalationStep, now: datetime):
    payload = incident_payload(ESCALATED, incident, occurred_at=now)
    payload["message"] = (
        f"Nobody has acknowledged this incident in {step.delay_minutes} min."
    )
    payload["escalation"] = {"step": step.pk, "delay_minutes": step.delay_minutes}
    return outbox.Message(
        event=ESCALATED,
        key=outbox.message_key(ESCALATED, incident.pk, step.pk),
        payload=payload,
        project_id=incident.project_id,
        incident_id=incident.pk,
    )


def _channel_ids(step: EscalationStep) -> list[int]:
    return [channel.pk for channel in step.channels.all()]
