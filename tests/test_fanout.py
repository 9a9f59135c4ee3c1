"""An admin save reaches every live poller; only the one holding the
project's shard polls it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

from polling.control import ControlServer
from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.shards import Ownership
from polling.fanout import FleetClient, live_control_urls
from polling.store import DatabaseResultStore, DatabaseTargetSource
from projects.models import PollerNode, PollResult
from tests.factories import quick_projects
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def node(name: str, url: str, **fields) -> PollerNode:
    now = timezone.now()
    return PollerNode.objects.create(
        name=name,
        host="test",
        pid=1,
        control_url=url,
        started_at=now,
        last_seen_at=fields.pop("last_seen_at", now),
        **fields,
    )


@pytest.fixture
def two_pollers(settings):
    """Two coordinators holding shard 0 and shard 1 of 2, each with its
    control server and PollerNode row."""
    running = []
    for shard in (0, 1):
        coordinator = Coordinator(
            PollerConfig(spread_seconds=1, reload_interval=3600),
            source=DatabaseTargetSource(),
            store=DatabaseResultStore(),
            ownership=Ownership(2, frozenset({shard})),
        )
        coordinator.start()
        control = ControlServer(
            coordinator,
            host="127.0.0.1",
            port=0,
            token=settings.POLLER_CONTROL_TOKEN,
        )
        control.start()
        node(f"poller-{shard}", f"http://127.0.0.1:{control.port}")
        running.append((coordinator, control))
    yield [coordinator for coordinator, _ in running]
    for coordinator, control in running:
        control.stop()
        coordinator.stop(timeout=10)


def test_a_save_reaches_the_owner_only(two_pollers, target_server):
    [project] = quick_projects(target_server, 1, interval=3600)
    owner, other = two_pollers[project.pk % 2], two_pollers[1 - project.pk % 2]

    assert FleetClient().sync_project(project.pk) is True

    assert owner.target(project.pk) is not None
    assert other.target(project.pk) is None
    wait_until(lambda: PollResult.objects.filter(project=project).exists(), timeout=2)
    assert target_server.count("/ok") == 1


def test_only_live_pollers_that_have_not_stopped_are_told():
    node("live", "http://127.0.0.1:1001")
    node("stopped", "http://127.0.0.1:1002", stopped_at=timezone.now())
    node(
        "silent",
        "http://127.0.0.1:1003",
        last_seen_at=timezone.now() - timedelta(minutes=5),
    )
    node("no endpoint", "")
    assert live_control_urls() == ["http://127.0.0.1:1001"]
