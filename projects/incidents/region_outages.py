"""A region that is itself broken (docs/regions.md): it cannot reach most
of its targets (blind), or no poller of it is alive (dark). Either way its
view of the projects does not count toward quorum, and the default
channels are told once when it begins and once when it ends.

Blindness is the "is it us?" rule (reachability.py) applied to one
region's own streaks, decided by the writer in the transaction that
stores the region's polls; a compare-and-set on Region.blind_since makes
one writer the teller. Darkness is seen by the watcher on the tasks
process (watcher.py), from the regions' heartbeats.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from projects.incidents.machine import DOWN, PENDING
from projects.incidents.reachability import MIN_FAILING_PROJECTS, is_cut_off
from projects.models import MonitorOutage, Notification, ProjectRegionState, Region
from projects.notifications import outbox

Event = Notification.Event
BLIND = MonitorOutage.Kind.REGION_BLIND
DARK = MonitorOutage.Kind.REGION_DARK


def reconsider_blindness(region_id: int, *, at: datetime) -> bool:
    """Whether the region is blind now, from its stored streaks; tells the
    default channels when that changed."""
    states = ProjectRegionState.objects.filter(
        region_id=region_id, project__enabled=True
    )
    failing = states.filter(failing_since__isnull=False).count()
    enabled = states.count() if failing >= MIN_FAILING_PROJECTS else 0
    blind = is_cut_off(failing=failing, enabled=enabled)
    counts = {"failing": failing, "enabled": enabled}
    region = Region.objects.only("name").get(pk=region_id)
    if blind:
        if Region.objects.filter(pk=region_id, blind_since=None).update(blind_since=at):
            outage = MonitorOutage.objects.create(
                kind=BLIND, region_id=region_id, started_at=at, detail=counts
            )
            outbox.queue_monitor_event(
                Event.MONITOR_UNREACHABLE,
                outage,
                at,
                f"Region {region.name} cannot reach most targets{outbox.TOTALS}: "
                "its checks do not count toward quorum until it can.",
                totals=f" ({failing} of {enabled} projects failing from it)",
            )
    elif Region.objects.filter(pk=region_id, blind_since__isnull=False).update(
        blind_since=None
    ):
        # What the region confirmed while blind is not trusted: a project
        # still failing from it confirms again before it counts.
        ProjectRegionState.objects.filter(region_id=region_id, state=DOWN).update(
            state=PENDING,
            consecutive_failures=0,
            consecutive_successes=0,
            failing_since=None,
        )
        outage = MonitorOutage.objects.filter(
            kind=BLIND, region_id=region_id, ended_at=None
        ).first()
        if outage is not None:
            outage.ended_at = at
            outage.save(update_fields=["ended_at"])
            outbox.queue_monitor_event(
                Event.MONITOR_REACHABLE,
                outage,
                at,
                f"Region {region.name} reaches its targets again; its checks "
                "count again.",
            )
    return blind


def watch_regions(*, now: datetime) -> list[str]:
    """One look at the regions' heartbeats; returns what changed. Only
    with more than one region: one region's silence is the whole monitor's
    (watcher.py)."""
    regions = list(Region.objects.filter(last_seen_at__isnull=False))
    if len(regions) < 2:
        return []
    silent = timedelta(seconds=settings.POLLER_SILENT_SECONDS)
    changes = []
    for region in regions:
        dark = now - region.last_seen_at > silent
        with transaction.atomic():
            if dark:
                changes += _went_dark(region, now)
            else:
                changes += _came_back(region, now)
    return changes


def _went_dark(region: Region, now: datetime) -> list[str]:
    if MonitorOutage.objects.filter(kind=DARK, region=region, ended_at=None).exists():
        return []
    try:
        with transaction.atomic():
            outage = MonitorOutage.objects.create(
                kind=DARK,
                region=region,
                started_at=region.last_seen_at,
                detail={"last_seen_at": region.last_seen_at.isoformat()},
            )
    except IntegrityError:
        return []  # another run got there first
    minutes = int((now - region.last_seen_at).total_seconds() // 60)
    outbox.queue_monitor_event(
        Event.POLLER_SILENT,
        outage,
        now,
        f"Region {region.name} has no live poller (none seen for {minutes} min): "
        "its checks do not count toward quorum until one is back.",
    )
    return [f"{region.name} dark"]


def _came_back(region: Region, now: datetime) -> list[str]:
    outage = MonitorOutage.objects.filter(
        kind=DARK, region=region, ended_at=None
    ).first()
    if outage is None:
        return []
    closed = MonitorOutage.objects.filter(pk=outage.pk, ended_at=None).update(
        ended_at=region.last_seen_at
    )
    if not closed:
        return []  # another run closed it
    outage.ended_at = region.last_seen_at
    outbox.queue_monitor_event(
        Event.POLLER_BACK,
        outage,
        now,
        f"Region {region.name} has a live poller again; its checks count again.",
    )
    return [f"{region.name} back"]
