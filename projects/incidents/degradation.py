"""The result writer's degraded step: up, but slow.

A project with a `degraded_after_ms` limit is degraded when **each** of
its last F polls (F: its failure threshold) got a response slower than
the limit, and stops being degraded when each of its last R polls (R: its
recovery threshold) was up within it. "Each of the last N", not "the p95
of the last N": one fast poll in a slow streak starts it again, as one
good poll does for a failing streak, so a degradation is as sure as an
outage before anyone is told. The decision table, one poll at a time:

    poll                         -> streaks           change
    down, no response, or in
      maintenance                -> both reset         -
    up, slower than the limit    -> slow + 1, fast 0  STARTED when slow = F
                                                      and not degraded
    otherwise (within the limit) -> fast + 1, slow 0  ENDED when fast = R
                                                      and degraded

Each episode is a Incident of kind "degraded" (the database allows one
open per project and kind), opened and resolved in the transaction that
stores the polls, with its notifications queued in the outbox there too:
a poller that restarts, or a batch saved again, cannot tell anyone twice.
Only channels with `notify_degraded` on are told of a start; those told
hear of its end. The project's `degraded_since` is what the pages read.
A project whose limit is taken away while degraded ends its episode at
its next poll.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from projects.incidents.machine import Poll
from projects.models import Incident, Notification, NotificationChannel, Project
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload

DEGRADED = Incident.Kind.DEGRADED
Event = Notification.Event


class Change(enum.Enum):
    STARTED = "started"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class Streaks:
    slow: int = 0
    fast: int = 0
    degraded: bool = False


def step(
    streaks: Streaks,
    poll: Poll,
    *,
    limit_ms: int,
    failures: int,
    recoveries: int,
    in_maintenance: bool = False,
) -> tuple[Streaks, Change | None]:
    """The streaks after one more poll, and what changed."""
    if in_maintenance or not poll.up or poll.response_time_ms is None:
        return Streaks(degraded=streaks.degraded), None
    if poll.response_time_ms > limit_ms:
        slow = streaks.slow + 1
        if not streaks.degraded and slow >= failures:
            return Streaks(slow, 0, True), Change.STARTED
        return Streaks(slow, 0, streaks.degraded), None
    fast = streaks.fast + 1
    if streaks.degraded and fast >= recoveries:
        return Streaks(0, fast, False), Change.ENDED
    return Streaks(0, fast, streaks.degraded), None


def record_degradations(
    polls: Sequence[Poll], in_maintenance: Callable[[Poll], bool]
) -> list[Incident]:
    """Move the streaks of the batch's projects that have a limit, open
    and resolve their degraded incidents and queue what must be told.
    Returns the incidents opened or resolved. Runs in the writer's
    transaction, after the project rows were locked."""
    ids = {poll.project_id for poll in polls}
    projects = (
        Project.objects.filter(
            Q(degraded_after_ms__isnull=False) | Q(degraded_since__isnull=False),
            pk__in=ids,
        )
        .only(
            "id",
            "name",
            "url",
            "team_id",
            "degraded_after_ms",
            "failure_threshold",
            "recovery_threshold",
            "slow_streak",
            "fast_streak",
            "degraded_since",
        )
        .in_bulk()
    )
    if not projects:
        return []
    started: dict[int, tuple[datetime, datetime]] = {}
    ended: dict[int, datetime] = {}
    for poll in sorted(polls, key=lambda p: p.at):
        project = projects.get(poll.project_id)
        if project is None:
            continue
        if project.degraded_after_ms is None:
            # Its limit was taken away while degraded: the episode ends.
            project.slow_streak = project.fast_streak = 0
            if project.degraded_since is not None:
                project.degraded_since = None
                ended[project.pk] = poll.at
            continue
        streaks, change = step(
            Streaks(
                project.slow_streak,
                project.fast_streak,
                project.degraded_since is not None,
            ),
            poll,
            limit_ms=project.degraded_after_ms,
            failures=project.failure_threshold,
            recoveries=project.recovery_threshold,
            in_maintenance=in_maintenance(poll),
        )
        project.slow_streak, project.fast_streak = streaks.slow, streaks.fast
        if change is Change.STARTED:
            # The first slow poll of the streak: as far back as it reaches
            # in this batch, else the poll that confirmed it.
            project.degraded_since = poll.at
            started[project.pk] = (poll.at, poll.at)
            ended.pop(project.pk, None)
        elif change is Change.ENDED:
            project.degraded_since = None
            ended[project.pk] = poll.at
    Project.objects.bulk_update(
        projects.values(), ["slow_streak", "fast_streak", "degraded_since"]
    )
    return _resolve(projects, ended) + _open(projects, started)


def _open(
    projects: dict[int, Project], started: dict[int, tuple[datetime, datetime]]
) -> list[Incident]:
    already = set(
        Incident.objects.filter(
            kind=DEGRADED, resolved_at=None, project_id__in=list(started)
        ).values_list("project_id", flat=True)
    )
    opened = [
        Incident(
            project=projects[pk],
            kind=DEGRADED,
            started_at=since,
            confirmed_at=at,
            first_error=_limit_text(projects[pk]),
            last_error=_limit_text(projects[pk]),
        )
        for pk, (since, at) in started.items()
        if pk not in already
    ]
    Incident.objects.bulk_create(opened)
    messages = [_message(Event.OPENED, i, i.confirmed_at) for i in opened]
    channels = _degraded_channels({m.project_id for m in messages})
    outbox.queue((m, channels.get(m.project_id, [])) for m in messages)
    return opened


def _resolve(projects: dict[int, Project], ended: dict[int, datetime]) -> list:
    incidents = list(
        Incident.objects.filter(
            kind=DEGRADED, resolved_at=None, project_id__in=list(ended)
        ).select_related("acknowledged_by")
    )
    for incident in incidents:
        incident.project = projects[incident.project_id]
        incident.resolved_at = ended[incident.project_id]
        incident.updated_at = timezone.now()
    Incident.objects.bulk_update(incidents, ["resolved_at", "updated_at"])
    outbox.queue_for_audience(
        [_message(Event.RESOLVED, i, i.resolved_at) for i in incidents]
    )
    return incidents


def _degraded_channels(project_ids: set[int]) -> dict[int, list[int]]:
    """{project id: its channels that asked to hear of degradations}."""
    if not project_ids:
        return {}
    every = outbox.project_channels(project_ids)
    wanted = set(
        NotificationChannel.objects.filter(
            pk__in={c for cs in every.values() for c in cs}, notify_degraded=True
        ).values_list("pk", flat=True)
    )
    return {pk: [c for c in cs if c in wanted] for pk, cs in every.items()}


def _limit_text(project: Project) -> str:
    return f"slower than {project.degraded_after_ms} ms"


def _message(event: str, incident: Incident, at: datetime) -> outbox.Message:
    payload = incident_payload(event, incident, occurred_at=at)
    name = incident.project.name
    payload["message"] = (
        f"{name} is fast again."
        if event == Event.RESOLVED
        else f"{name} is degraded: its last polls were {incident.first_error}."
    )
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload=payload,
        project_id=incident.project_id,
        incident_id=incident.pk,
    )
