"""The poller page's list of pollers: live, stopped and gone ones, with the
shards each holds."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from polling.fleet_status import node_views
from projects.models import PollerNode, ShardLease

pytestmark = pytest.mark.django_db


def node(name: str, *, seen_ago: float = 0, stopped: bool = False) -> PollerNode:
    now = timezone.now()
    return PollerNode.objects.create(
        name=name,
        host="test",
        pid=1,
        started_at=now - timedelta(minutes=5),
        last_seen_at=now - timedelta(seconds=seen_ago),
        stopped_at=now if stopped else None,
    )


def lease(shard: int, owner: PollerNode, *, expires_in: float) -> None:
    ShardLease.objects.create(
        shard=shard,
        owner=owner,
        expires_at=timezone.now() + timedelta(seconds=expires_in),
    )


def test_it_lists_live_stopped_and_gone_pollers_with_their_shards():
    live, gone = node("live"), node("gone", seen_ago=120)
    node("stopped", stopped=True)
    lease(0, live, expires_in=10)
    lease(1, live, expires_in=10)
    lease(2, gone, expires_in=-100)

    views = {view.name: view for view in node_views()}

    assert {name: v.state for name, v in views.items()} == {
        "live": "live",
        "gone": "gone",
        "stopped": "stopped",
    }
    assert {name: v.shards for name, v in views.items()} == {
        "live": 2,
        "gone": 0,
        "stopped": 0,
    }


def test_pollers_gone_for_over_an_hour_are_not_listed():
    node("old", seen_ago=2 * 3600)
    assert node_views() == []


def test_the_poller_page_shows_every_poller(admin_client):
    live = node("host-a:101")
    node("host-b:102", seen_ago=120)
    lease(0, live, expires_in=10)
    page = admin_client.get(reverse("polling:poller")).content.decode()
    assert "host-a:101" in page
    assert "host-b:102" in page
    assert "Gone" in page
