"""Making, listing and revoking agents: the token is shown once and only
its hash kept; only superusers manage agents; the poller page shows what
each agent holds in its buffer."""

from __future__ import annotations

import re
from io import StringIO

import pytest

from django.core.management import CommandError, call_command
from django.utils import timezone

from projects.models import Agent, Region, Role, Team
from projects.models.api_keys import hash_key
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

ADD = "/admin/projects/agent/add/"
LIST = "/admin/projects/agent/"


def test_createagent_prints_the_token_once_and_keeps_its_hash():
    out = StringIO()
    call_command("createagent", "office-1", "--region", "office", stdout=out)
    token = out.getvalue().strip()

    agent = Agent.objects.get(name="office-1")
    assert agent.region.name == "office"
    assert agent.team is None  # one team: an install-wide agent
    assert agent.token_hash == hash_key(token)
    assert token not in agent.token_hash


def test_createagent_asks_for_a_team_when_there_are_several():
    Team.objects.create(name="Other", slug="other")
    with pytest.raises(CommandError, match="several teams: give --team"):
        call_command("createagent", "a1", stdout=StringIO())
    call_command("createagent", "a1", "--team", "other", stdout=StringIO())
    assert Agent.objects.get(name="a1").team.slug == "other"


def test_an_agent_made_in_the_admin_is_shown_once(admin_client):
    region = Region.objects.create(name="office")
    response = admin_client.post(ADD, {"name": "a1", "region": region.pk})

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    agent = Agent.objects.get(name="a1")
    page = response.content.decode()
    token = re.search(r'value="(uma_[\w-]+)"', page).group(1)
    assert agent.token_hash == hash_key(token)
    assert token not in admin_client.get(LIST).content.decode()
    assert token not in admin_client.get(f"{LIST}{agent.pk}/change/").content.decode()


def test_only_superusers_see_agents():
    team = Team.objects.get(slug="default")
    manager = member(team, Role.MANAGER, "manager")
    assert client_of(manager).get(LIST).status_code == 403


def test_the_poller_page_shows_what_each_agent_holds(admin_client):
    agent, _ = Agent.issue("a1", Region.objects.create(name="office"))
    Agent.objects.filter(pk=agent.pk).update(
        buffered_results=1234, last_seen_at=timezone.now()
    )
    page = admin_client.get("/poller/").content.decode()
    assert "a1" in page
    assert "1234" in page


def test_a_revoked_agent_is_refused_at_its_next_call(admin_client):
    agent, _ = Agent.issue("a1", Region.objects.create(name="office"))
    admin_client.post(LIST, {"action": "revoke", "_selected_action": [agent.pk]})
    assert Agent.objects.get(pk=agent.pk).is_revoked


def test_a_member_sees_the_agents_of_their_team_only():
    team = Team.objects.get(slug="default")
    other = Team.objects.create(name="Other", slug="other")
    office = Region.objects.create(name="office")
    Agent.issue("ours", office, team=team)
    Agent.issue("theirs", office, team=other)
    page = client_of(member(team, Role.VIEWER, "viewer")).get("/poller/")
    text = page.content.decode()
    assert "ours" in text
    assert "theirs" not in text
