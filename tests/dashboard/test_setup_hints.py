"""On a fresh install, the pages say what is missing before anyone hears of
an outage: a first project, then a notification channel, then a default
one; and an incident that told nobody says so."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.dashboard.banners import setup_hints
from projects.models import Incident, Notification, Team

pytestmark = pytest.mark.django_db

OVERVIEW = reverse("dashboard:overview")
INCIDENTS = reverse("incidents:list")
ADD_CHANNEL = reverse("admin:projects_notificationchannel_add")
CHANNELS = reverse("admin:projects_notificationchannel_changelist")


def banner_kinds() -> list[str]:
    return [banner.kind for banner in setup_hints(team=Team.objects.first())]


def test_an_empty_install_points_to_a_project_first(admin_client):
    html = admin_client.get(OVERVIEW).content.decode()
    assert "No projects yet." in html
    assert reverse("admin:projects_project_add") in html
    assert ADD_CHANNEL not in html
    assert banner_kinds() == []


@pytest.mark.parametrize("url", [OVERVIEW, INCIDENTS])
def test_after_the_first_project_the_next_step_is_a_channel(
    admin_client, make_project, url
):
    make_project()
    html = admin_client.get(url).content.decode()
    assert "Next step: add a notification channel" in html
    assert f'<a href="{ADD_CHANNEL}">Add a notification channel</a>' in html
    assert admin_client.get(ADD_CHANNEL).status_code == 200


@pytest.mark.parametrize("url", [OVERVIEW, INCIDENTS])
def test_without_a_default_channel_the_pages_warn(
    admin_client, make_project, make_channel, url
):
    make_project()
    make_channel(is_default=False)
    html = admin_client.get(url).content.decode()
    assert "No default notification channel: new projects will notify nobody" in html
    assert f'<a href="{CHANNELS}">Mark a channel as default, or add one</a>' in html
    assert "Next step" not in html


def test_the_overview_knows_whether_there_are_projects(django_assert_num_queries):
    team = Team.objects.first()
    with django_assert_num_queries(1):
        assert setup_hints(team=team, has_projects=False) == []


def test_a_disabled_default_channel_does_not_count(make_channel):
    make_channel(is_default=True, enabled=False)
    assert banner_kinds() == ["warning"]


def test_an_enabled_default_channel_ends_the_hints(make_project, make_channel):
    make_channel(is_default=False)
    make_channel(is_default=True)
    make_project()  # the default channel is attached to it
    assert banner_kinds() == []


def incident_row(admin_client) -> str:
    html = admin_client.get(INCIDENTS).content.decode()
    return html.split('<tr class="incident-', 1)[1].split("</tr>", 1)[0]


def test_an_incident_that_told_nobody_says_so(admin_client, make_project):
    project = make_project()
    started = timezone.now() - timedelta(hours=1)
    Incident.objects.create(project=project, started_at=started, confirmed_at=started)
    row = incident_row(admin_client)
    assert "0 of 0" in row
    assert "nobody was told" in row
    assert reverse("admin:projects_project_change", args=[project.pk]) in row


def test_an_incident_that_told_a_channel_has_no_such_hint(
    admin_client, make_project, make_channel
):
    project = make_project()
    now = timezone.now()
    incident = Incident.objects.create(
        project=project, started_at=now, confirmed_at=now
    )
    Notification.objects.create(
        key="opened",
        event="incident.opened",
        channel=make_channel(),
        project=project,
        incident=incident,
    )
    row = incident_row(admin_client)
    assert "0 of 1" in row
    assert "nobody was told" not in row
