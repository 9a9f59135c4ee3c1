"""Shard leases in the tests: poller rows, a keeper with a clock of its
own that notes every Ownership it hands the engine, and an outage's end
(tests/poller/test_leases.py, test_lease_stalls.py)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from polling.engine.shards import Ownership
from polling.leases import LeaseKeeper, ensure_lease_rows
from projects.models import PollerNode, ShardLease

SHARDS = 8


def node(name: str) -> PollerNode:
    now = timezone.now()
    return PollerNode.objects.create(
        name=name, host="test", pid=1, started_at=now, last_seen_at=now
    )


class Keeper(LeaseKeeper):
    def __init__(self, poller: PollerNode, *, settled: bool = True) -> None:
        self.heard: list[Ownership] = []
        self.now = 100.0
        self.wall = 1_800_000_000.0
        super().__init__(
            node_id=poller.pk,
            shard_count=SHARDS,
            ttl=15,
            tick=5,
            on_change=self.heard.append,
            settle=lambda timeout: settled,
            clock=lambda: self.now,
            wall_clock=lambda: self.wall,
        )
        ensure_lease_rows(SHARDS)


def held_by(poller: PollerNode) -> set[int]:
    return set(ShardLease.objects.filter(owner=poller).values_list("shard", flat=True))


def expire_everything() -> None:
    """What an outage longer than the TTL leaves: every lease expired and
    no poller seen since."""
    long_ago = timezone.now() - timedelta(seconds=60)
    ShardLease.objects.update(expires_at=long_ago)
    PollerNode.objects.update(last_seen_at=long_ago)
