"""A default channel covers what exists when asked: the admin's "also
attach" box and the API's attach_to_existing, with the count; the project
list's bulk attach and detach; and the dashboard counts the projects that
notify nobody, with a link to them."""

from __future__ import annotations

import pytest

from django.urls import reverse

from projects.models import NotificationChannel, Project, Team
from projects.notifications import coverage

pytestmark = pytest.mark.django_db

ADD_CHANNEL = reverse("admin:projects_notificationchannel_add")
PROJECTS = reverse("admin:projects_project_changelist")
OVERVIEW = reverse("dashboard:overview")
CHANNEL_FORM = {
    "name": "ops hook",
    "kind": "webhook",
    "url": "http://127.0.0.1:9/hook",
    "secret": "",
    "enabled": "on",
    "is_default": "on",
    "send_resolved": "on",
    "reminder_minutes": "0",
}


def channel_names(project: Project) -> set[str]:
    return {channel.name for channel in project.channels.all()}


def test_the_add_form_offers_to_cover_the_projects_that_exist(
    admin_client, make_project
):
    for _ in range(3):
        make_project()

    page = admin_client.get(ADD_CHANNEL).content.decode()

    assert "Also attach to the 3 existing projects without it" in page


def test_a_default_channel_saved_with_the_box_covers_every_project(
    admin_client, make_project
):
    projects = [make_project() for _ in range(3)]

    response = admin_client.post(
        ADD_CHANNEL, {**CHANNEL_FORM, "attach_to_existing": "on"}, follow=True
    )

    assert response.status_code == 200
    assert all(channel_names(p) == {"ops hook"} for p in projects)
    shown = [str(m) for m in response.context["messages"]]
    assert "“ops hook” is now attached to 3 more project(s)." in shown


def test_without_the_box_a_default_channel_covers_only_new_projects(
    admin_client, make_project
):
    project = make_project()

    admin_client.post(ADD_CHANNEL, CHANNEL_FORM)

    assert channel_names(project) == set()
    assert NotificationChannel.objects.get().is_default


def test_the_api_flag_attaches_and_answers_with_the_count(write_api, make_project):
    for _ in range(2):
        make_project()
    created = write_api.post(
        "/api/v1/channels/",
        {
            "name": "ops",
            "kind": "webhook",
            "url": "http://127.0.0.1:9/hook",
            "is_default": True,
            "attach_to_existing": True,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["attached_projects"] == 2
    channel = NotificationChannel.objects.get()
    assert channel.projects.count() == 2

    make_project().channels.clear()  # say it predates the channel
    changed = write_api.patch(
        f"/api/v1/channels/{channel.pk}/", {"attach_to_existing": True}, format="json"
    )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["attached_projects"] == 1
    assert (
        "attached_projects"
        not in write_api.patch(
            f"/api/v1/channels/{channel.pk}/", {"reminder_minutes": 30}, format="json"
        ).json()
    )


def test_the_api_refuses_a_flag_that_is_not_a_boolean(write_api):
    response = write_api.post(
        "/api/v1/channels/",
        {
            "name": "ops",
            "kind": "email",
            "url": "a@example.org",
            "attach_to_existing": "x",
        },
        format="json",
    )
    assert response.status_code == 400
    assert "attach_to_existing" in response.json()


def bulk(admin_client, action: str, projects, channels=(), apply=True):
    data = {
        "action": action,
        "_selected_action": [p.pk for p in projects],
        "channel": [c.pk for c in channels],
    }
    if apply:
        data["apply"] = "1"
    return admin_client.post(PROJECTS, data, follow=True)


def test_bulk_attach_asks_which_channels_then_attaches_them(
    admin_client, make_project, make_channel
):
    first, second, other = make_project(), make_project(), make_project()
    hook, mail = make_channel(name="hook"), make_channel(name="mail")

    asked = bulk(admin_client, "attach_channels", [first, second], apply=False)
    page = asked.content.decode()
    assert page.count('name="channel"') == 2

    done = bulk(admin_client, "attach_channels", [first, second], [hook, mail])

    assert done.status_code == 200
    assert channel_names(first) == channel_names(second) == {"hook", "mail"}
    assert channel_names(other) == set()
    shown = [str(m) for m in done.context["messages"]]
    assert "“hook”, “mail”: attached to 4 link(s) in all." in shown


def test_bulk_attach_without_a_channel_asks_again(admin_client, make_project):
    project = make_project()
    response = bulk(admin_client, "attach_channels", [project])
    assert "Choose at least one channel." in response.content.decode()


def test_bulk_detach_removes_only_the_chosen_channels(
    admin_client, make_project, make_channel
):
    hook, mail = make_channel(name="hook"), make_channel(name="mail")
    project = make_project()
    project.channels.set([hook, mail])

    bulk(admin_client, "detach_channels", [project], [hook])

    assert channel_names(project) == {"mail"}


def test_a_channel_of_another_team_is_never_attached(make_project, make_channel):
    other = Team.objects.create(name="other", slug="other")
    foreign = make_channel(name="foreign", team=other)
    project = make_project()

    assert coverage.attach([foreign], Project.objects.all()) == 0
    assert channel_names(project) == set()


def test_the_dashboard_counts_the_projects_that_notify_nobody(
    admin_client, make_project, make_channel
):
    covered, muted = make_project(), make_project()
    for _ in range(2):
        make_project()
    make_project(enabled=False)  # paused: nobody expects news of it
    # Made after the projects, as in the README's order: covers none.
    covered.channels.set([make_channel(is_default=True)])
    muted.channels.set([make_channel(enabled=False)])

    html = admin_client.get(OVERVIEW).content.decode()

    assert "3 projects notify nobody" in html
    link = f"{PROJECTS}?notifies=nobody"
    assert f'<a href="{link}">Attach channels to them</a>' in html
    listed = admin_client.get(link).context["cl"].result_list
    assert len(listed) == 3
    assert covered not in listed


def test_the_count_goes_once_every_enabled_project_is_covered(
    admin_client, make_project, make_channel
):
    project = make_project()
    hook = make_channel(is_default=True)
    assert "1 project notifies nobody" in admin_client.get(OVERVIEW).content.decode()

    project.channels.set([hook])

    assert "notif" not in " ".join(
        hint.text for hint in admin_client.get(OVERVIEW).context["hints"]
    )
