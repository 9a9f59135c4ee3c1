"""A poller back from a stall (SIGSTOP, a frozen VM, a keeper thread held
up) proves it is current before it polls a shard again (issue #39): a
shard another poller held meanwhile is taken back only once nothing of
the holding before (queued polls, unsaved results, old due times) is left
in memory, and the fence never saves under the new token what was polled
under the old one."""

from __future__ import annotations

import pytest

from django.db import transaction
from django.utils import timezone

from polling.leases import LeaseFence, trust_margin
from projects.models import PollerNode, ShardLease
from tests.support.fleet import needs_postgresql
from tests.support.leases import SHARDS, Keeper, expire_everything, held_by, node
from tests.support.outcomes import outcome

pytestmark = [pytest.mark.django_db, needs_postgresql]

EVERY = frozenset(range(SHARDS))


class Watched(Keeper):
    """A keeper whose settle() notes what the engine polled and what the
    fence would save while it waited."""

    def __init__(self, poller: PollerNode, *, settles: bool = True) -> None:
        super().__init__(poller)
        self.settles = settles
        self.waits: list[tuple[frozenset[int], list[int]]] = []
        self._settle = self.note_settle

    def note_settle(self, timeout: float) -> bool:
        with transaction.atomic():
            admitted = LeaseFence(self).admit(
                [outcome(project_id=s) for s in range(SHARDS)]
            )
        self.waits.append((self.heard[-1].shards, [o.project_id for o in admitted]))
        return self.settles


def held_meanwhile_by_another(keeper: Keeper) -> None:
    """The keeper's leases lapse (it is paused), another poller takes them
    over and hands them back (it sees the keeper live again)."""
    expire_everything()
    other = node("other")
    taker = Keeper(other)
    taker.tick()
    assert held_by(other) == set(EVERY)
    taker.release_all()


def test_shards_another_poller_held_meanwhile_are_polled_only_once_settled():
    keeper = Watched(node("paused"))
    keeper.tick()
    held_meanwhile_by_another(keeper)

    ownership = keeper.tick()

    # First nothing of them is polled and nothing of them saved, until
    # what was polled before the pause is settled; then all of them.
    assert keeper.waits == [(frozenset(), [])]
    assert ownership.shards == EVERY
    assert keeper.heard[-1].shards == EVERY
    tokens = dict(ShardLease.objects.values_list("shard", "token"))
    assert keeper.tokens() == tokens


def test_shards_lost_and_taken_back_a_tick_later_are_settled_first_too():
    keeper = Watched(node("paused"))
    keeper.tick()
    expire_everything()
    taker = Keeper(node("other"))
    taker.tick()
    assert keeper.tick().shards == frozenset()  # back: all taken over
    taker.release_all()

    assert keeper.tick().shards == EVERY
    assert keeper.waits == [(frozenset(), [])]


def test_shards_not_settled_within_a_tick_are_released_not_held_unpolled():
    keeper = Watched(node("paused"), settles=False)
    keeper.tick()
    held_meanwhile_by_another(keeper)

    assert keeper.tick().shards == frozenset()
    assert held_by(PollerNode.objects.get(name="paused")) == set()
    # Next tick they are free again, still to be settled first.
    keeper.settles = True
    assert keeper.tick().shards == EVERY
    assert len(keeper.waits) == 2


def test_shards_taken_back_after_an_outage_nobody_else_held_need_no_settle():
    keeper = Watched(node("a"))
    keeper.tick()
    expire_everything()
    keeper.lost_contact()
    assert keeper.tick().shards == EVERY
    assert keeper.waits == []


def test_leases_are_trusted_for_ttl_less_margin_on_both_clocks():
    keeper = Keeper(node("a"))
    ownership = keeper.tick()
    assert ownership.trusted_until == keeper.now + 15 - trust_margin(15)
    assert ownership.trusted_until_wall == keeper.wall + 15 - trust_margin(15)


def test_the_first_shards_a_poller_takes_need_no_settle():
    PollerNode.objects.update(stopped_at=timezone.now())
    keeper = Watched(node("new"))
    assert keeper.tick().shards == EVERY
    assert keeper.waits == []
