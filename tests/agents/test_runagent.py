"""runagent end to end: a real agent process, with no database setting at
all, polls a local target and its results reach the server (pytest-django's
live server, a real HTTP server on the test database) through HTTP only."""

from __future__ import annotations

import pytest

from projects.models import Agent, PollResult, Project, Region
from tests.support.agents import start_agent, stop, wait
from tests.support.factories import quick_projects
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


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


def test_a_server_gone_for_a_while_loses_and_duplicates_nothing(
    live_server, target_server, office, tmp_path
):
    quick_projects(target_server, 2)
    _, token = Agent.issue("a1", office)
    host, port = live_server.thread.host, live_server.thread.port
    with TcpProxy((host, port)) as proxy:
        agent = start_agent(f"http://127.0.0.1:{proxy.port}", token, tmp_path / "b")
        try:
            wait_until(lambda: stored(office) >= 2)
            proxy.down()
            during = target_server.count()
            # The agent keeps polling while the server is away.
            wait_until(lambda: target_server.count() >= during + 6)
            proxy.up()
            wait_until(lambda: stored(office) >= during + 6)
        finally:
            code, _out, err = stop(agent)

    assert code == 0, err
    assert stored(office) == target_server.count() == windows(office)


def test_a_killed_agents_region_is_taken_over_by_the_one_standing_by(
    live_server, target_server, office, tmp_path, settings
):
    settings.AGENT_SILENT_SECONDS = 2  # the live server runs in this process
    quick_projects(target_server, 2)
    _first, first_token = Agent.issue("a1", office)
    second, second_token = Agent.issue("a2", office)
    killed = start_agent(live_server.url, first_token, tmp_path / "1")
    standing_by = None
    try:
        wait_until(lambda: stored(office) >= 2)
        standing_by = start_agent(live_server.url, second_token, tmp_path / "2")
        wait_until(lambda: Agent.objects.get(pk=second.pk).last_seen_at is not None)
        assert Agent.objects.get(pk=second.pk).active_since is None

        killed.kill()
        killed.wait()
        after_kill = stored(office)
        wait_until(lambda: Agent.objects.get(pk=second.pk).active_since is not None)
        wait_until(lambda: stored(office) >= after_kill + 4)
    finally:
        killed.kill()
        if standing_by is not None:
            code, _, err = stop(standing_by)
            assert code == 0, err

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
