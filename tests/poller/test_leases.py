"""Shard leases on PostgreSQL: sharing, handing over, taking over expired
leases, and the writer's fence."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection, transaction
from django.utils import timezone

from polling.engine.config import PollerConfig
from polling.engine.shards import Ownership
from polling.leases import LeaseFence, LeaseKeeper, ensure_lease_rows, trust_margin
from polling.wiring import shared_coordinator
from polling.writer_process import HeldLeases
from projects.models import PollerNode, ShardLease
from tests.support.fleet import needs_postgresql
from tests.support.outcomes import outcome

pytestmark = [
    pytest.mark.django_db,
    needs_postgresql,
]

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
        super().__init__(
            node_id=poller.pk,
            shard_count=SHARDS,
            ttl=15,
            tick=5,
            on_change=self.heard.append,
            settle=lambda timeout: settled,
            clock=lambda: self.now,
        )
        ensure_lease_rows(SHARDS)


def held_by(poller: PollerNode) -> set[int]:
    return set(ShardLease.objects.filter(owner=poller).values_list("shard", flat=True))


def test_a_lone_poller_takes_every_shard_and_trusts_them_for_ttl_less_margin():
    keeper = Keeper(node("a"))
    ownership = keeper.tick()
    assert ownership.shards == frozenset(range(SHARDS))
    assert ownership.trusted_until == 100 + 15 - trust_margin(15)
    assert keeper.statements == 1


def test_two_pollers_split_the_shards_evenly():
    a, b = node("a"), node("b")
    Keeper(a).tick()
    Keeper(b).tick()
    assert held_by(a) == {0, 1, 2, 3}
    assert held_by(b) == {4, 5, 6, 7}


def test_a_poller_above_its_share_hands_the_surplus_over_once_settled():
    a = node("a")
    keeper = Keeper(a)
    keeper.tick()
    b = node("b")
    keeper.tick()
    assert keeper.heard[-1].shards == frozenset({0, 1, 2, 3})
    assert held_by(a) == {0, 1, 2, 3}
    Keeper(b).tick()
    assert held_by(b) == {4, 5, 6, 7}


def test_shards_are_kept_while_their_results_are_not_saved():
    a = node("a")
    Keeper(a, settled=False).tick()
    node("b")
    keeper = Keeper(a, settled=False)
    keeper.tick()
    assert keeper.heard[-1].shards == frozenset({0, 1, 2, 3})  # not polled
    assert held_by(a) == set(range(SHARDS))  # but still held


def test_expired_leases_are_taken_over_with_a_new_token_and_fence_the_old_owner():
    a = node("a")
    old = Keeper(a)
    old.tick()
    fence = LeaseFence(old)
    with transaction.atomic():
        assert len(fence.admit([outcome(project_id=s) for s in range(4)])) == 4
    b = node("b")
    ShardLease.objects.filter(shard__lt=4).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    tokens = dict(ShardLease.objects.values_list("shard", "token"))

    new = Keeper(b)
    assert new.tick().shards == frozenset({0, 1, 2, 3})
    assert all(new.tokens()[s] == tokens[s] + 1 for s in range(4))
    with transaction.atomic():
        kept = fence.admit([outcome(project_id=s) for s in range(SHARDS)])
    assert [o.project_id for o in kept] == [4, 5, 6, 7]
    assert fence.dropped == 4


def test_released_leases_are_free_at_once():
    a = node("a")
    keeper = Keeper(a)
    keeper.tick()
    keeper.release_all()
    assert held_by(a) == set()
    assert Keeper(node("b")).tick().shards == frozenset(range(SHARDS))


def test_the_fence_counts_one_statement_per_batch():
    keeper = Keeper(node("a"))
    keeper.tick()
    fence = LeaseFence(keeper)
    with transaction.atomic():
        fence.admit([outcome(project_id=s) for s in range(SHARDS)])
        fence.admit([outcome(project_id=1)])
    assert fence.statements == 2


def test_a_shared_poller_reports_its_lease_statements_in_status():
    coordinator, keeper = shared_coordinator(PollerConfig(), node_id=node("a").pk)
    ensure_lease_rows(keeper.shard_count)
    keeper.tick()
    assert coordinator.status().lease_statements == 1


def expire_everything() -> None:
    """What an outage longer than the TTL leaves: every lease expired and
    no poller seen since."""
    long_ago = timezone.now() - timedelta(seconds=60)
    ShardLease.objects.update(expires_at=long_ago)
    PollerNode.objects.update(last_seen_at=long_ago)


def test_after_losing_contact_a_poller_takes_back_only_its_own_shards():
    a, b = node("a"), node("b")
    Keeper(a).tick()
    Keeper(a).tick()  # hands 4-7 over
    keeper = Keeper(b)
    keeper.tick()
    fence = LeaseFence(keeper)
    expire_everything()

    keeper.lost_contact()
    assert keeper.tick().shards == frozenset({4, 5, 6, 7})
    assert held_by(a) == {0, 1, 2, 3}  # left for a to take back
    with transaction.atomic():
        kept = fence.admit([outcome(project_id=s) for s in range(SHARDS)])
    assert [o.project_id for o in kept] == [4, 5, 6, 7]
    # One tick later a has not come back: its shards are taken over.
    assert keeper.tick().shards == frozenset(range(SHARDS))


def test_results_sent_before_a_poller_retakes_its_own_lapsed_shards_are_kept():
    # The writer process got the tokens with the batch; the keeper's first
    # tick after the outage took the same shards back, each token one up.
    keeper = Keeper(node("a"))
    keeper.tick()
    sent = HeldLeases(keeper.node_id, SHARDS, dict(keeper.tokens()))
    expire_everything()
    keeper.lost_contact()
    keeper.tick()
    fence = LeaseFence(sent)

    with transaction.atomic():
        kept = fence.admit([outcome(project_id=s) for s in range(SHARDS)])

    assert [o.project_id for o in kept] == list(range(SHARDS))
    assert fence.dropped == 0


def test_a_shard_another_poller_held_in_between_stays_fenced():
    a, b = node("a"), node("b")
    keeper = Keeper(a)
    keeper.tick()
    sent = HeldLeases(keeper.node_id, SHARDS, dict(keeper.tokens()))
    expire_everything()
    Keeper(b).tick()  # b takes them all
    expire_everything()
    PollerNode.objects.filter(pk=b.pk).update(stopped_at=timezone.now())
    keeper.tick()  # and a takes them back: two takeovers on

    with transaction.atomic():
        assert LeaseFence(sent).admit([outcome(project_id=1)]) == []


def test_after_losing_contact_free_shards_are_taken_at_once():
    keeper = Keeper(node("a"))
    keeper.lost_contact()
    assert keeper.tick().shards == frozenset(range(SHARDS))


@pytest.mark.django_db(transaction=True)
def test_release_all_reconnects_when_an_outage_cut_the_connection():
    import psycopg

    a = node("a")
    keeper = Keeper(a)
    keeper.tick()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        [pid] = cursor.fetchone()
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])

    keeper.release_all()
    assert held_by(a) == set()
    assert PollerNode.objects.get(pk=a.pk).stopped_at is not None
