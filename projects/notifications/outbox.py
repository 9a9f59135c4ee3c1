"""The outbox's writing side: queue an event for the right channels.

Call these inside the transaction that decides the event, so the event is
queued exactly when the decision is stored. Each (event, channel) becomes
one Notification row whose `key` is unique: queuing the same event again,
from a retry or from a second writer, adds nothing. The tasks process
delivers the rows; nothing here sends anything.

Who hears of what:
- incident.opened: the project's channels;
- incident.escalated: the channels of a step that fired (escalation.py);
- incident.resolved, .acknowledged, .reminder: the channels that were told
  it opened or escalated (so nobody hears of the end of an outage they
  never heard of);
- monitor.* and poller.*: the default channels of the teams concerned
  (monitor_audiences);
and never a disabled channel, nor incident.resolved to a channel with
send_resolved off.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from projects.models import MonitorOutage, Notification, NotificationChannel, Project
from projects.notifications.payloads import monitor_payload
from projects.notifications.trigger import request_delivery

Event = Notification.Event
State = Notification.State


@dataclass(frozen=True, slots=True)
class Message:
    """One event, before it is queued per channel."""

    event: str  # a Notification.Event value
    key: str  # names the event once, e.g. "incident:42:opened"
    payload: dict
    project_id: int | None = None
    incident_id: int | None = None


def message_key(event: str, subject_id: int, *more: object) -> str:
    """Names one event once: "incident.opened:42" (incident 42),
    "incident.reminder:42:3" (its third reminder), "monitor.unreachable:5"
    (MonitorOutage 5)."""
    return ":".join([event, str(subject_id), *map(str, more)])


def notification_key(message_key: str, channel_id: int) -> str:
    """The outbox key of one message to one channel; receivers see it as
    the stable message id (the webhook-id header)."""
    return f"{message_key}:{channel_id}"


def queue(
    deliveries: Iterable[tuple[Message, Iterable[int]]], *, held: bool = False
) -> int:
    """Queue each message for each of its channel ids, as pending (or held,
    to be released or dropped later). Returns how many rows were offered;
    keys already queued are left as they are."""
    pairs = [
        (message, channel) for message, channels in deliveries for channel in channels
    ]
    if not pairs:
        return 0
    usable = _usable_channels({channel for _, channel in pairs})
    now = timezone.now()
    rows = [
        Notification(
            key=notification_key(message.key, channel),
            event=message.event,
            channel_id=channel,
            project_id=message.project_id,
            incident_id=message.incident_id,
            payload=message.payload,
            state=State.HELD if held else State.PENDING,
            created_at=now,
            next_attempt_at=now,
        )
        for message, channel in pairs
        if channel in usable and (message.event != Event.RESOLVED or usable[channel])
    ]
    Notification.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    if rows and not held:
        transaction.on_commit(request_delivery, robust=True)
    return len(rows)


def queue_for_projects(messages: Sequence[Message], *, held: bool = False) -> int:
    """Queue each message for its project's channels."""
    if not messages:
        return 0  # building the queries costs a writer's small batch dearly
    channels = project_channels({m.project_id for m in messages})
    return queue(((m, channels[m.project_id]) for m in messages), held=held)


def queue_for_audience(messages: Sequence[Message]) -> int:
    """Queue each message for the channels told that its incident opened."""
    if not messages:
        return 0
    told = told_channels({m.incident_id for m in messages})
    return queue((m, told[m.incident_id]) for m in messages)


# Where a monitor notice's totals go in its text. They are counted over
# the whole install, so they are the operator's: trusted teams read them;
# any other team reads the same news without them (one team never learns
# another's numbers).
TOTALS = "{totals}"


def queue_monitor_event(
    event: str, outage: MonitorOutage, at: datetime, message: str, *, totals: str = ""
) -> int:
    """Queue news about the monitor itself (monitor.*, poller.*) for the
    default channels of the teams it concerns; `message` says what
    happened in words, with TOTALS where `totals` (the install's counts,
    in words) goes for trusted teams. Other teams' channels get the
    message without them, and a payload without the outage's counts."""
    operator, others = monitor_audiences(outage)
    key = message_key(event, outage.pk)

    def news(text: str, *, counts: bool) -> Message:
        payload = monitor_payload(
            event, outage, message=text, occurred_at=at, counts=counts
        )
        return Message(event=event, key=key, payload=payload)

    return queue(
        [
            (news(message.replace(TOTALS, totals), counts=True), operator),
            (news(message.replace(TOTALS, ""), counts=False), others),
        ]
    )


def monitor_audiences(outage: MonitorOutage) -> tuple[list[int], list[int]]:
    """The default channels that hear of the monitor's own outage: those
    of every trusted team (the operator's own, docs/teams.md), and those of
    any other team with an enabled project the outage leaves unchecked: for
    a region, a project it polls (by name, or as one of every region);
    for the whole monitor, any project. A team none of whose projects is
    concerned hears nothing of the monitor's troubles. The same rule
    decides who hears that it is over. (Trusted teams' channels, the other
    teams' channels.)"""
    concerned = Project.objects.filter(enabled=True)
    if outage.region_id is not None:
        concerned = concerned.filter(
            Q(regions=outage.region_id) | Q(regions__isnull=True)
        )
    defaults = NotificationChannel.objects.filter(is_default=True, enabled=True)
    trusted = defaults.filter(team__trusted=True)
    others = defaults.filter(team__trusted=False, team__in=concerned.values("team"))
    return (
        list(trusted.values_list("pk", flat=True)),
        list(others.values_list("pk", flat=True)),
    )


def project_channels(project_ids: Iterable[int]) -> dict[int, list[int]]:
    """{project id: its channel ids}, one query. Only channels of the
    project's own team: a link to another team's channel (which no form
    offers) would tell that team of this one's incidents."""
    links = Project.channels.through.objects.filter(
        project_id__in=list(project_ids),
        notificationchannel__team=F("project__team"),
    )
    channels = defaultdict(list)
    for project_id, channel_id in links.values_list(
        "project_id", "notificationchannel_id"
    ):
        channels[project_id].append(channel_id)
    return channels


def told_channels(incident_ids: Iterable[int]) -> dict[int, set[int]]:
    """{incident id: the channels its incident.opened or .escalated went
    to, or will go to}: held and dropped ones were never sent."""
    rows = (
        Notification.objects.filter(
            incident_id__in=list(incident_ids),
            event__in=[Event.OPENED, Event.ESCALATED],
        )
        .exclude(state__in=[State.HELD, State.DROPPED])
        .values_list("incident_id", "channel_id")
    )
    told = defaultdict(set)
    for incident_id, channel_id in rows:
        told[incident_id].add(channel_id)
    return told


def _usable_channels(channel_ids: set[int]) -> dict[int, bool]:
    """{id: send_resolved} of the enabled channels among these."""
    return dict(
        NotificationChannel.objects.filter(
            pk__in=channel_ids, enabled=True
        ).values_list("pk", "send_resolved")
    )


# Holding back incident.opened while the monitor itself is cut off.


def hold_unsent_openings(*, since) -> int:
    """Hold the incident.opened rows queued since `since` that no
    deliverer has touched yet. Returns how many."""
    now = timezone.now()
    return (
        Notification.objects.filter(
            event=Event.OPENED, state=State.PENDING, attempts=0, created_at__gte=since
        )
        .exclude(claimed_until__gt=now)
        .update(state=State.HELD)
    )


def release_held() -> int:
    """Send every held row now. Returns how many."""
    released = Notification.objects.filter(state=State.HELD).update(
        state=State.PENDING, next_attempt_at=timezone.now()
    )
    if released:
        transaction.on_commit(request_delivery, robust=True)
    return released


def drop_held(incident_ids: Iterable[int]) -> int:
    """Never send the held rows of these incidents (they are over)."""
    incident_ids = list(incident_ids)
    if not incident_ids:
        return 0
    return Notification.objects.filter(
        incident_id__in=incident_ids, state=State.HELD
    ).update(state=State.DROPPED)
