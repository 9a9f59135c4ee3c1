"""An admin save reaches every live poller; only the one holding the
project's shard polls it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from polling.control import ControlServer
from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.shards import Ownership
from polling.fanout import live_control_urls
from polling.store import DatabaseResultStore, DatabaseTargetSource
from projects.models import PollerNode, PollResult, Project
from tests.support.factories import project_form
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ADD_URL = reverse("admin:projects_project_add")


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


SHARDS = 3


@pytest.fixture
def pollers(settings):
    """Three coordinators, each holding one shard of three, each with its
    control server and PollerNode row."""
    running = []
    for shard in range(SHARDS):
        coordinator = Coordinator(
            PollerConfig(spread_seconds=1, reload_interval=3600),
            source=DatabaseTargetSource(),
            store=DatabaseResultStore(),
            ownership=Ownership(SHARDS, frozenset({shard})),
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


def test_an_admin_save_reaches_the_owner_only(pollers, admin_client, target_server):
    admin_client.post(ADD_URL, project_form(target_server, interval_unit="hours"))
    project = Project.objects.get()
    owner = pollers[project.pk % SHARDS]
    others = [poller for poller in pollers if poller is not owner]

    wait_until(lambda: PollResult.objects.filter(project=project).exists())
    assert owner.target(project.pk) is not None
    assert [poller.target(project.pk) for poller in others] == [None, None]
    assert target_server.count("/ok") == 1

    change_url = reverse("admin:projects_project_change", args=[project.pk])
    admin_client.post(
        change_url, project_form(target_server, "/status/200", interval_unit="hours")
    )
    wait_until(lambda: target_server.count("/status/200") == 1)
    assert [poller.target(project.pk) for poller in others] == [None, None]
    assert sum(poller.status().polls_total for poller in others) == 0


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
