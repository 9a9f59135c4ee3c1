"""The result writer's incident step: open, extend and resolve incidents
as the state step decided, and queue what people must be told.

It runs in the writer's transaction right after the project-state step,
whose row locks it relies on: one writer at a time per project, so the
open incident it reads is the one it updates. The database's partial
unique constraint (one open incident per project and kind) backs that up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Q, QuerySet
from django.utils import timezone

from projects.checks.kinds.flow import failing_step
from projects.incidents import reachability
from projects.incidents.batch_writes import batch_cursor, datetime_adapter, update_rows
from projects.incidents.machine import Change, Effect, Transition
from projects.models import Incident, Notification, PollResult, Project, Status
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload

Event = Notification.Event


@dataclass
class Ledger:
    """What one batch did to incidents."""

    opened: list[Incident] = field(default_factory=list)
    resolved: list[Incident] = field(default_factory=list)
    new: list[Incident] = field(default_factory=list)
    changed: dict[int, Incident] = field(default_factory=dict)


def record_incidents(effects: dict[int, Effect], *, at: datetime) -> Ledger:
    """Apply the batch's transitions to incidents and queue their events.
    `at` is the time of the batch's latest poll."""
    moving = {pid: e for pid, e in effects.items() if e.transitions}
    for project_id in _extend(moving):
        del moving[project_id]
    ledger = _apply(moving) if moving else Ledger()
    # An opening still held was never sent: drop it before anything could
    # release it, and say nothing more about that incident.
    outbox.drop_held(incident.pk for incident in ledger.resolved)
    cut_off = False
    if ledger.opened or reachability.worth_a_look(effects.values()):
        cut_off = reachability.reconsider(at=at)
    _queue_openings(ledger.opened, held=cut_off)
    _queue_resolutions(ledger.resolved)
    return ledger


def _extend(moving: dict[int, Effect]) -> set[int]:
    """Count more failed polls on the open incidents of projects that only
    failed again, in one statement without reading the incidents: most
    batches, while some projects stay down. Returns those projects; the
    others, and any whose incident is gone (removed by hand), are left to
    _apply()."""
    failing_on = {
        project_id: effect.transitions
        for project_id, effect in moving.items()
        if all(t.change is Change.FAILED for t in effect.transitions)
    }
    if not failing_on:
        return set()
    rows = [
        (len(transitions), transitions[-1].poll.error, project_id)
        for project_id, transitions in failing_on.items()
    ]
    with batch_cursor() as cursor:
        extended = update_rows(
            cursor,
            Incident,
            ["failed_polls", "last_error"],
            rows,
            expressions={"failed_polls": "{old} + {new}"},
            key="project",
            condition=_OPEN_DOWNTIME,
        )
    if extended == len(rows):
        return set(failing_on)
    return set(_open_downtime(failing_on).values_list("project_id", flat=True))


# The project's open downtime incident, for update_rows(): _open_downtime()
# in SQL.
_OPEN_DOWNTIME = (
    f"{{table}}.kind = '{Incident.Kind.DOWNTIME}' AND {{table}}.resolved_at IS NULL"
)


def _apply(moving: dict[int, Effect]) -> Ledger:
    ledger = Ledger()
    undescribed: list[Incident] = []
    current = _open_incidents(moving)
    projects = _projects(moving, current)
    for project_id, effect in moving.items():
        for transition in effect.transitions:
            incident = current.get(project_id)
            if transition.change is Change.RESOLVED:
                if incident is not None:
                    incident.resolved_at = transition.poll.at
                    # Status pages show the end (their version reads it).
                    incident.updated_at = timezone.now()
                    ledger.resolved.append(_touched(ledger, incident))
                    current.pop(project_id)
            elif incident is None:
                # OPENED, or FAILED with no open incident (one removed by
                # hand): the project is down and nobody has been told.
                incident = _new_incident(projects[project_id], transition)
                if not transition.described:
                    undescribed.append(incident)
                ledger.new.append(incident)
                ledger.opened.append(incident)
                current[project_id] = incident
            else:
                incident.failed_polls += 1
                incident.last_error = transition.poll.error
                _touched(ledger, incident)
    _fill_first_errors(undescribed)
    Incident.objects.bulk_create(ledger.new)
    _save_changes(ledger.changed.values())
    return ledger


def _save_changes(incidents: Iterable[Incident]) -> None:
    # One statement for the batch: bulk_update's CASE per row and field was
    # a fifth of the writer's CPU while many incidents were open.
    adapt = datetime_adapter()
    rows = [
        (i.failed_polls, i.last_error, adapt(i.resolved_at), adapt(i.updated_at), i.pk)
        for i in incidents
    ]
    if not rows:  # most batches: no cursor needed
        return
    fields = ["failed_polls", "last_error", "resolved_at", "updated_at"]
    with batch_cursor() as cursor:
        update_rows(cursor, Incident, fields, rows)


def _open_incidents(moving: dict[int, Effect]) -> dict[int, Incident]:
    incidents = _open_downtime(moving).select_related("project", "acknowledged_by")
    return {incident.project_id: incident for incident in incidents}


def _open_downtime(project_ids: Iterable[int]) -> QuerySet[Incident]:
    """The projects' open downtime incidents (_OPEN_DOWNTIME in SQL)."""
    return Incident.objects.filter(
        kind=Incident.Kind.DOWNTIME, resolved_at=None, project_id__in=list(project_ids)
    )


def _projects(
    moving: dict[int, Effect], current: dict[int, Incident]
) -> dict[int, Project]:
    """The moving projects, for new incidents: those with an open incident
    came with it, so most batches (incidents extended) need no query."""
    projects = {pid: incident.project for pid, incident in current.items()}
    missing = [pid for pid in moving if pid not in projects]
    if missing:
        projects |= Project.objects.only("name", "url", "kind").in_bulk(missing)
    return projects


def _touched(ledger: Ledger, incident: Incident) -> Incident:
    """Note a change to an incident; new ones are saved whole anyway."""
    if incident.pk is not None:
        ledger.changed[incident.pk] = incident
    return incident


def _new_incident(project: Project, transition: Transition) -> Incident:
    poll, streak = transition.poll, transition.streak
    return Incident(
        project=project,
        kind=Incident.Kind.DOWNTIME,
        started_at=streak.failing_since or poll.at,
        confirmed_at=poll.at,
        first_error=poll.error,
        last_error=poll.error,
        failed_polls=streak.failures,
        title=_title(project, poll.error),
    )


def _title(project: Project, error: str) -> str:
    """A flow's incident names the step that failed ("checkout works:
    step 2 'my orders' failed"); others are named after their project."""
    step = failing_step(error) if project.is_flow else ""
    return f"{project.name}: {step} failed"[:200] if step else ""


def _fill_first_errors(incidents: list[Incident]) -> None:
    """The error of each streak's first failed poll, stored already (this
    batch's polls are inserted before this step), in one query."""
    wanted = [i for i in incidents if i.started_at != i.confirmed_at]
    if not wanted:
        return
    matches = reduce(
        or_, (Q(project_id=i.project_id, polled_at=i.started_at) for i in wanted)
    )
    errors = dict(
        PollResult.objects.filter(matches, status=Status.DOWN)
        .values_list("project_id", "error_message")
        .order_by()
    )
    for incident in wanted:
        incident.first_error = errors.get(incident.project_id, incident.first_error)


def _queue_openings(incidents: Iterable[Incident], *, held: bool) -> None:
    messages = [
        _message(Event.OPENED, incident, incident.confirmed_at)
        for incident in incidents
    ]
    outbox.queue_for_projects(messages, held=held)


def _queue_resolutions(incidents: list[Incident]) -> None:
    outbox.queue_for_audience(
        [_message(Event.RESOLVED, i, i.resolved_at) for i in incidents]
    )


def _message(event: str, incident: Incident, at: datetime) -> outbox.Message:
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload=incident_payload(event, incident, occurred_at=at),
        project_id=incident.project_id,
        incident_id=incident.pk,
    )
