"""Every poller the poller page lists: its state, shards, polls/s, lag."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from polling.client import ControlClient
from polling.engine.status import PollerStatus
from projects.models import PollerNode, Region, ShardLease

# Pollers gone longer than this are no longer listed.
SHOWN_FOR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class NodeView:
    name: str
    started_at: datetime
    last_seen_at: datetime
    state: str  # "live", "stopped" (cleanly) or "gone" (lease expired)
    shards: int
    projects: int | None = None
    polls_per_second: float | None = None
    lag_p99_ms: float | None = None
    # What the poller answered on its control endpoint; None unless live.
    status: PollerStatus | None = None


def node_views(now: datetime | None = None) -> list[NodeView]:
    """The pollers seen within SHOWN_FOR, live ones first. A live one is
    asked for its status (one short call each)."""
    now = now or timezone.now()
    nodes = PollerNode.objects.filter(last_seen_at__gte=now - SHOWN_FOR).order_by(
        "stopped_at", "name"
    )[:50]
    shards = dict(
        ShardLease.objects.filter(expires_at__gt=now)
        .values_list("owner")
        .annotate(count=Count("shard"))
    )
    return [_view(node, now, shards.get(node.pk, 0)) for node in nodes]


def _state(node: PollerNode, now: datetime) -> str:
    if node.stopped_at is not None:
        return "stopped"
    live_after = now - timedelta(seconds=max(settings.POLLER_LEASE_TTL, 30))
    return "live" if node.last_seen_at >= live_after else "gone"


def _view(node: PollerNode, now: datetime, shards: int) -> NodeView:
    state = _state(node, now)
    status = None
    if state == "live" and node.control_url:
        status = ControlClient(base_url=node.control_url).status()
    rate = None
    if status and status.uptime_seconds:
        rate = round(status.polls_total / status.uptime_seconds, 1)
    return NodeView(
        name=node.name,
        started_at=node.started_at,
        last_seen_at=node.last_seen_at,
        state=state,
        shards=shards,
        projects=status.active_projects if status else None,
        polls_per_second=rate,
        lag_p99_ms=status.lag_p99_ms if status else None,
        status=status,
    )


@dataclass(frozen=True, slots=True)
class RegionView:
    """One region on the poller page (docs/regions.md)."""

    name: str
    label: str
    live_pollers: int
    last_seen_at: datetime | None
    blind: bool

    @property
    def dark(self) -> bool:
        return self.live_pollers == 0


def region_views(now: datetime | None = None) -> list[RegionView]:
    """The regions pollers have reported from, with their live pollers;
    empty when only one has (a single-region install shows nothing)."""
    now = now or timezone.now()
    regions = list(Region.objects.filter(last_seen_at__isnull=False))
    if len(regions) < 2:
        return []
    live_after = now - timedelta(seconds=max(settings.POLLER_LEASE_TTL, 30))
    live = dict(
        PollerNode.objects.filter(stopped_at=None, last_seen_at__gte=live_after)
        .values_list("region")
        .annotate(count=Count("pk"))
    )
    return [
        RegionView(
            name=region.name,
            label=region.label,
            live_pollers=live.get(region.pk, 0),
            last_seen_at=region.last_seen_at,
            blind=region.blind_since is not None,
        )
        for region in regions
    ]
