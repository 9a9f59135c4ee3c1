"""Two regions of agents and one of database pollers are one quorum: an
incident opens once, only when two regions agree (docs/agents.md)."""

from __future__ import annotations

import pytest

from django.db.models import Count

from projects.models import Agent, Incident, PollResult, Project, Region, Status
from tests.support.agents import start_agent, stop
from tests.support.alerting import make_channel, queued_events
from tests.support.factories import quick_projects
from tests.support.fleet import Poller, needs_postgresql
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgresql,  # the database poller's region shares by leases
]

INTERVAL = 2
SOURCES = {"eu": "127.0.0.2", "us": "127.0.0.3", "ap": "127.0.0.4"}


def results(region: str, **filters) -> int:
    return PollResult.objects.filter(region__name=region, **filters).count()


def duplicates() -> int:
    counts = PollResult.objects.values("project", "region", "polled_at").annotate(
        n=Count("*")
    )
    return sum(row["n"] - 1 for row in counts)


def test_agents_and_a_poller_open_one_incident_when_two_regions_agree(
    live_server, target_server, tmp_path
):
    (project,) = quick_projects(target_server, 1, path="/by-source", interval=INTERVAL)
    Project.objects.filter(pk=project.pk).update(
        quorum=2, failure_threshold=2, recovery_threshold=1
    )
    project.channels.add(make_channel())
    agents = []
    for region in ("eu", "us"):
        _, token = Agent.issue(region, Region.objects.create(name=region))
        agents.append(
            start_agent(
                live_server.url,
                token,
                tmp_path / region,
                POLLER_SOURCE_ADDRESS=f"host!{SOURCES[region]}",
                POLLER_RECHECK_SECONDS=str(INTERVAL),
            )
        )
    poller = Poller(
        tmp_path,
        "ap",
        POLLER_REGION="ap",
        POLLER_SOURCE_ADDRESS=f"host!{SOURCES['ap']}",
        POLLER_RECHECK_SECONDS=str(INTERVAL),
    )
    try:
        wait_until(lambda: all(results(r) >= 2 for r in SOURCES))

        target_server.status_by_source = {SOURCES["eu"]: 503}
        before = results("eu", status=Status.DOWN)
        wait_until(lambda: results("eu", status=Status.DOWN) >= before + 3)
        one_region_incidents = Incident.objects.count()

        target_server.status_by_source = {SOURCES["eu"]: 503, SOURCES["us"]: 503}
        wait_until(lambda: Incident.objects.exists())
        opened_at = PollResult.objects.count()
        wait_until(lambda: PollResult.objects.count() >= opened_at + 6)
        incidents_while_down = Incident.objects.count()

        target_server.status_by_source = {}
        wait_until(lambda: Incident.objects.filter(resolved_at__isnull=False).exists())
    finally:
        codes = [stop(agent)[0] for agent in agents]
        poller_code = poller.stop()

    incident = Incident.objects.get()
    assert one_region_incidents == 0
    assert incidents_while_down == 1
    assert incident.first_error.startswith("eu: expected 200, got 503; us: ")
    assert "ap" not in incident.first_error
    assert queued_events(project=project) == ["incident.opened", "incident.resolved"]
    assert duplicates() == 0
    assert codes == [0, 0]
    assert poller_code == 0, poller.output()
