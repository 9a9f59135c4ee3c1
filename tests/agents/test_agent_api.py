"""The server's side of the agent protocol: an agent's token reads only
its region's (and team's) projects and writes only their results, each
window once however often it is sent."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from django.test import Client
from django.utils import timezone

from polling.agents import views
from polling.engine.types import Outcome
from polling.engine.wire import outcome_to_json
from projects.models import Agent, PollResult, Project, Region, Team

pytestmark = pytest.mark.django_db


def post(client: Client, token: str, path: str, body: dict):
    return client.post(
        f"/api/v1/agent/{path}",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.fixture
def office():
    return Region.objects.create(name="office")


def project(name: str, *, region=None, team=None, kind=Project.Kind.POLL) -> Project:
    fields = {"team": team} if team else {}
    made = Project.objects.create(
        name=name, url=f"http://127.0.0.1:9/{name}", kind=kind, **fields
    )
    if region is not None:
        made.regions.add(region)
    return made


def an_outcome(project_id: int, minute: int = 0) -> dict:
    at = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=minute)
    return outcome_to_json(
        Outcome(
            project_id=project_id, up=True, started_at=at, due_at=at, status_code=200
        )
    )


def test_without_a_valid_token_nothing_is_answered(office):
    agent, token = Agent.issue("a1", office)
    client = Client()
    assert post(client, "", "sync/", {}).status_code == 401
    assert post(client, "uma_wrong", "sync/", {}).status_code == 401
    agent.revoke()
    answer = post(client, token, "sync/", {})
    assert answer.status_code == 401
    assert "revoked" in answer.json()["detail"]


def test_an_agent_gets_its_regions_projects_of_its_team_and_no_heartbeats(office):
    other_region = Region.objects.create(name="elsewhere")
    other_team = Team.objects.create(name="Other", slug="other")
    mine = project("mine", region=office)
    unassigned = project("unassigned")  # every region polls it
    project("elsewhere", region=other_region)
    project("theirs", region=office, team=other_team)
    project("pinged", region=office, kind=Project.Kind.HEARTBEAT)
    default_team = Project.objects.get(pk=mine.pk).team
    _, token = Agent.issue("a1", office, team=default_team)

    answer = post(Client(), token, "sync/", {"version": "1.0", "buffered_results": 4})

    assert answer.status_code == 200
    body = answer.json()
    assert body["active"] is True
    assert body["complete"] is True
    assert body["config"]["region"] == "office"
    assert sorted(t["project_id"] for t in body["targets"]) == sorted(
        [mine.pk, unassigned.pk]
    )
    agent = Agent.objects.get(name="a1")
    assert agent.version == "1.0"
    assert agent.buffered_results == 4
    assert Region.objects.get(pk=office.pk).last_seen_at is not None


def test_a_second_agent_stands_by_until_the_first_is_silent(office, settings):
    settings.AGENT_SILENT_SECONDS = 30
    project("mine", region=office)
    first, first_token = Agent.issue("a1", office)
    _, second_token = Agent.issue("a2", office)
    client = Client()

    assert post(client, first_token, "sync/", {}).json()["active"] is True
    standing_by = post(client, second_token, "sync/", {}).json()
    assert standing_by["active"] is False
    assert standing_by["targets"] == []

    Agent.objects.filter(pk=first.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=31)
    )
    taking_over = post(client, second_token, "sync/", {}).json()
    assert taking_over["active"] is True
    assert len(taking_over["targets"]) == 1
    # The first, back, stands by: the region keeps one active agent.
    assert post(client, first_token, "sync/", {}).json()["active"] is False


def test_only_the_active_agents_sync_keeps_its_region_live(office, settings):
    settings.AGENT_SILENT_SECONDS = 30
    _, first_token = Agent.issue("a1", office)
    _, second_token = Agent.issue("a2", office)
    client = Client()
    post(client, first_token, "sync/", {})
    long_ago = timezone.now() - timedelta(seconds=20)
    Region.objects.filter(pk=office.pk).update(last_seen_at=long_ago)

    # A standby polls nothing: its sync does not keep the region from
    # going dark (docs/agents.md).
    assert post(client, second_token, "sync/", {}).json()["active"] is False
    assert Region.objects.get(pk=office.pk).last_seen_at == long_ago
    assert post(client, first_token, "sync/", {}).json()["active"] is True
    assert Region.objects.get(pk=office.pk).last_seen_at > long_ago


def test_a_region_larger_than_one_answer_is_named_by_its_ids(office, monkeypatch):
    monkeypatch.setattr(views, "MAX_TARGETS_AT_ONCE", 1)
    ids = sorted(project(name, region=office).pk for name in ("one", "two"))
    _, token = Agent.issue("a1", office)

    body = post(Client(), token, "sync/", {}).json()

    assert body["complete"] is False
    assert sorted(body["ids"]) == ids
    assert body["targets"] == []


def test_changes_since_a_time_carry_every_id_and_the_changed_targets(office):
    old = project("old", region=office)
    _, token = Agent.issue("a1", office)
    since = timezone.now()
    Project.objects.filter(pk=old.pk).update(updated_at=since - timedelta(hours=1))
    new = project("new", region=office)

    body = post(Client(), token, "sync/", {"since": since.isoformat()}).json()

    assert body["complete"] is False
    assert sorted(body["ids"]) == sorted([old.pk, new.pk])
    assert [t["project_id"] for t in body["targets"]] == [new.pk]
    assert body["removed"] == []
    asked = post(Client(), token, "targets/", {"ids": [old.pk, 999999]}).json()
    assert [t["project_id"] for t in asked["targets"]] == [old.pk]


def test_a_sync_without_ids_still_tells_the_projects_saved_away_from_the_agent(
    office,
):
    kept, disabled, moved = (project(n, region=office) for n in ("a", "b", "c"))
    elsewhere = project("elsewhere", region=Region.objects.create(name="x"))
    _, token = Agent.issue("a1", office)
    since = timezone.now()
    Project.objects.filter(pk=kept.pk).update(updated_at=since - timedelta(hours=1))
    Project.objects.filter(pk=disabled.pk).update(enabled=False, updated_at=since)
    moved.regions.set([elsewhere.regions.get()])
    Project.objects.filter(pk=moved.pk).update(updated_at=since)

    body = post(Client(), token, "sync/", {"since": since.isoformat(), "ids": False})

    assert "ids" not in body.json()
    assert body.json()["targets"] == []
    assert sorted(body.json()["removed"]) == sorted([disabled.pk, moved.pk])


def test_results_are_stored_in_the_agents_region_once_however_often_sent(office):
    mine = project("mine", region=office)
    elsewhere = project("elsewhere", region=Region.objects.create(name="x"))
    _, token = Agent.issue("a1", office)
    outcomes = [
        an_outcome(mine.pk, 1),
        an_outcome(mine.pk, 0),
        an_outcome(elsewhere.pk),
    ]
    client = Client()

    first = post(client, token, "results/", {"outcomes": outcomes}).json()
    again = post(client, token, "results/", {"outcomes": outcomes}).json()

    assert first == {"received": 3, "saved": 2, "refused": 1}
    assert again == {"received": 3, "saved": 0, "refused": 1}
    rows = PollResult.objects.filter(project=mine)
    assert rows.count() == 2
    assert set(rows.values_list("region_id", flat=True)) == {office.pk}
    assert not PollResult.objects.filter(project=elsewhere).exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"outcomes": "nope"}, "outcomes: expected a list"),
        ({"outcomes": [{"project_id": 1, "up": True}]}, r"outcomes\[0\]"),
        ({"outcomes": [{"project_id": 1, "started_at": "x"}]}, "started_at"),
    ],
)
def test_a_bad_batch_is_a_400_naming_the_field(office, body, message):
    _, token = Agent.issue("a1", office)
    answer = post(Client(), token, "results/", body)
    assert answer.status_code == 400
    assert re.search(message, answer.json()["detail"])


def test_a_body_that_is_not_json_is_a_400(office):
    _, token = Agent.issue("a1", office)
    answer = Client().post(
        "/api/v1/agent/sync/",
        data=b"{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 400
