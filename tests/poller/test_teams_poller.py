"""A team's editor changes the team's project in the admin and the running
poller polls the new address within 2 s, as after a superuser's change;
someone in two teams switches between them in the header."""

from __future__ import annotations

import pytest

from django.urls import reverse

from polling.receivers import SENDER
from projects.models import Membership, PollResult, Project, Role
from tests.support.factories import project_form
from tests.support.teams import client_of, make_team, member
from tests.support.waiting import wait_until


def test_an_editors_change_reaches_the_running_poller(
    running_poller, target_server, settings
):
    settings.MIN_POLL_INTERVAL = 1  # the form polls every second
    a = make_team("alpha")
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    poller = running_poller.coordinator

    added = editor.post(
        reverse("admin:projects_project_add"), project_form(target_server, "/old")
    )
    assert added.status_code == 302, added.context["adminform"].form.errors
    project = Project.objects.get(name="api")
    assert project.team == a.team
    wait_until(lambda: PollResult.objects.filter(project=project).exists())

    change = reverse("admin:projects_project_change", args=[project.pk])
    editor.post(change, project_form(target_server, "/new"))

    assert SENDER.flush() is True  # the call goes out from a thread of its own
    assert poller.target(project.pk).url == target_server.url("/new")
    wait_until(lambda: target_server.count("/new") >= 1)


@pytest.mark.django_db
def test_someone_in_two_teams_switches_in_the_header():
    a, b = make_team("alpha"), make_team("bravo")
    user = member(a.team, Role.VIEWER, "vera")
    Membership.objects.create(user=user, team=b.team, role=Role.VIEWER)
    client = client_of(user)

    first = client.get(reverse("dashboard:overview")).content.decode()
    client.post(reverse("teams:switch"), {"team": b.team.pk, "next": "/"})
    second = client.get(reverse("dashboard:overview")).content.decode()

    assert 'name="team"' in first
    assert "alpha-site" in first
    assert "bravo-site" not in first
    assert "bravo-site" in second
    assert "alpha-site" not in second


@pytest.mark.django_db
def test_someone_in_one_team_sees_no_picker():
    a = make_team("alpha")
    make_team("bravo")  # the install has two teams; this person is in one
    client = client_of(member(a.team, Role.VIEWER, "vera"))

    assert (
        'name="team"' not in client.get(reverse("dashboard:overview")).content.decode()
    )
