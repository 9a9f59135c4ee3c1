"""runagent end to end: a real agent process, with no database setting at
all, polls a local target and its results reach the server (pytest-django's
live server, a real HTTP server on the test database) through HTTP only."""

from __future__ import annotations

import re

import pytest

from django.utils import timezone

from polling.agents import views
from projects.incidents.region_outages import watch_regions
from projects.models import Agent, MonitorOutage, PollResult, Project, Region
from tests.support.agents import output, start_agent, stop, wait
from tests.support.factories import quick_projects
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import HANG_SECONDS, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The issue's "the server stopped for 60 s loses nothing and duplicates
# nothing" (#46). The test waits that long on the target's count, nearly
# idle, so it costs its xdist worker a minute but the machine little CPU.
OUTAGE_SECONDS = 60
# Each polled every second: the buffer holds some 120 results at the end.
OUTAGE_PROJECTS = 2


def stored(region: Region) -> int:
    return PollResult.objects.filter(region=region).count()


def windows(region: Region) -> int:
    return (
        PollResult.objects.filter(region=region)
        .values("project_id", "polled_at")
        .distinct()
        .count()
    )


@pytest.fixture
def office():
    return Region.objects.create(name="office")


def test_an_agent_without_a_database_polls_and_its_results_reach_the_server(
    live_server, target_server, office, tmp_path
):
    quick_projects(target_server, 2)
    _, token = Agent.issue("a1", office)
    agent = start_agent(live_server.url, token, tmp_path / "buffer.sqlite3")
    try:
        wait_until(lambda: stored(office) >= 4)
        # A project saved on the server reaches the running agent.
        quick_projects(target_server, 1, path="/new")
        Project.objects.filter(url__contains="/new").update(name="touched")
        wait_until(lambda: target_server.count("/new") >= 1)
    finally:
        code, out, err = stop(agent)

    assert code == 0, err
    assert "Stopped with 0 results buffered on disk." in out
    # Every poll the target answered is a row, in the agent's region.
    assert stored(office) == target_server.count() == windows(office)
    assert Agent.objects.get(name="a1").last_seen_at is not None


def test_a_region_larger_than_one_answer_reaches_the_agent_page_by_page(
    live_server, target_server, office, tmp_path, monkeypatch
):
    # The live server runs in this process: its first sync names the
    # projects by id, as for a region of more than 5,000.
    monkeypatch.setattr(views, "MAX_TARGETS_AT_ONCE", 1)
    quick_projects(target_server, 3)
    _, token = Agent.issue("a1", office)
    agent = start_agent(live_server.url, token, tmp_path / "buffer.sqlite3")
    polled = PollResult.objects.filter(region=office).values("project").distinct()
    try:
        wait_until(lambda: polled.count() == 3)
    finally:
        code, _out, err = stop(agent)
    assert code == 0, err


def buffered_on_status_line(agent) -> int:
    """The buffer's size on the agent's latest status line (0 before one)."""
    _out, err = output(agent)
    sizes = re.findall(r"; (\d+) results buffered", err)
    return int(sizes[-1]) if sizes else 0


@pytest.mark.timeout(OUTAGE_SECONDS + 3 * HANG_SECONDS)
def test_a_server_gone_for_a_minute_loses_and_duplicates_nothing(
    live_server, target_server, office, tmp_path
):
    quick_projects(target_server, OUTAGE_PROJECTS, interval=1)
    _, token = Agent.issue("a1", office)
    host, port = live_server.thread.host, live_server.thread.port
    with TcpProxy((host, port)) as proxy:
        agent = start_agent(f"http://127.0.0.1:{proxy.port}", token, tmp_path / "b")
        try:
            wait_until(lambda: stored(office) >= OUTAGE_PROJECTS)
            proxy.down()
            during = target_server.count()
            # The agent keeps polling while the server is away: a minute's
            # polls, every one kept on disk and on the status line.
            missed = OUTAGE_PROJECTS * OUTAGE_SECONDS
            wait_until(
                lambda: target_server.count() >= during + missed,
                timeout=OUTAGE_SECONDS + HANG_SECONDS,
            )
            wait_until(lambda: buffered_on_status_line(agent) >= missed)
            assert stored(office) <= during
            proxy.up()
            wait_until(lambda: stored(office) >= during + missed)
        finally:
            code, _out, err = stop(agent)

    assert code == 0, err
    # Counted at the target and in the rows: none lost, none twice.
    assert stored(office) == target_server.count() == windows(office)


def test_a_killed_agents_region_goes_dark_once_then_the_standby_takes_over(
    live_server, target_server, office, tmp_path, settings
):
    # As the defaults are (monitor/settings.py), the region is called dark
    # before the standby takes over; both short, and far enough apart that
    # a loaded machine still sees them in that order.
    settings.POLLER_SILENT_SECONDS = 4
    settings.AGENT_SILENT_SECONDS = 12
    quick_projects(target_server, 2)
    # Regions go dark only when there are several (docs/regions.md).
    branch = Region.objects.create(name="branch")
    _, branch_token = Agent.issue("b1", branch)
    _first, first_token = Agent.issue("a1", office)
    second, second_token = Agent.issue("a2", office)
    agents = [
        start_agent(live_server.url, branch_token, tmp_path / "b1"),
        start_agent(live_server.url, first_token, tmp_path / "a1"),
    ]
    killed = agents[-1]
    told, active_when_dark = [], []

    def watched_until(change: str) -> bool:
        # What the tasks process's watcher does every minute.
        for told_now in watch_regions(now=timezone.now()):
            if told_now.startswith("office "):
                told.append(told_now)
                active_when_dark.append(standby_active())
        return change in told

    def standby_active() -> bool:
        return Agent.objects.get(pk=second.pk).active_since is not None

    try:
        wait_until(lambda: stored(office) >= 2 and stored(branch) >= 2)
        agents.append(start_agent(live_server.url, second_token, tmp_path / "a2"))
        wait_until(lambda: Agent.objects.get(pk=second.pk).last_seen_at is not None)
        assert not standby_active()

        killed.kill()
        killed.wait()
        after_kill = stored(office)
        wait_until(lambda: watched_until("office back"))
        assert standby_active()
        wait_until(lambda: stored(office) >= after_kill + 4)
    finally:
        killed.kill()
        codes = [stop(agent)[0] for agent in agents if agent is not killed]

    assert codes == [0, 0]
    assert told == ["office dark", "office back"]
    assert active_when_dark == [False, True]
    (dark,) = MonitorOutage.objects.filter(
        kind=MonitorOutage.Kind.REGION_DARK, region=office
    )
    taken_over_at = Agent.objects.get(pk=second.pk).active_since
    assert dark.started_at < taken_over_at <= dark.ended_at
    assert stored(office) == windows(office)  # no window twice


def test_a_revoked_agent_stops_at_its_next_sync(
    live_server, target_server, office, tmp_path
):
    quick_projects(target_server, 1)
    agent_row, token = Agent.issue("a1", office)
    agent = start_agent(live_server.url, token, tmp_path / "b")
    try:
        wait_until(lambda: stored(office) >= 1)
        agent_row.revoke()
    finally:
        code, _, err = wait(agent)
    assert code == 0, err
    assert "refused this agent's token" in err
