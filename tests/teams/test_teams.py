"""Teams and roles: each team sees and changes only its own objects, as its
role allows; a team's incidents notify only its own channels; people with
no team see nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.as_code.apply import import_projects
from projects.as_code.export import export_yaml
from projects.as_code.validation import InvalidFile
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import MaintenanceWindow, Notification, Project, Role, Team
from tests.support.outcomes import outcome
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db


def admin_change(obj) -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])


def test_a_viewer_sees_only_their_teams_projects(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    overview = viewer.get(reverse("dashboard:overview")).content.decode()
    incidents = viewer.get(reverse("incidents:list")).content.decode()

    assert "alpha-site" in overview
    assert "bravo" not in overview
    assert "alpha-site" in incidents
    assert "bravo" not in incidents


def test_another_teams_project_is_not_found_by_url(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    assert (
        viewer.get(reverse("dashboard:project", args=[a.project.pk])).status_code == 200
    )
    assert (
        viewer.get(reverse("dashboard:project", args=[b.project.pk])).status_code == 404
    )
    listed = viewer.get(reverse("incidents:list"), {"project": b.project.pk})
    assert listed.status_code == 404


def test_a_viewer_may_acknowledge_their_teams_incident_only(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    ours = viewer.post(reverse("incidents:acknowledge", args=[a.incident.pk]))
    theirs = viewer.post(reverse("incidents:acknowledge", args=[b.incident.pk]))

    assert ours.status_code == 302
    assert theirs.status_code == 404
    a.incident.refresh_from_db()
    b.incident.refresh_from_db()
    assert a.incident.acknowledged_at is not None
    assert b.incident.acknowledged_at is None


def test_a_staff_user_with_no_team_sees_nothing(a, b):
    nobody = client_of(member(None, None, "nemo"))

    overview = nobody.get(reverse("dashboard:overview")).content.decode()
    incidents = nobody.get(reverse("incidents:list")).content.decode()
    admin_index = nobody.get(reverse("admin:index")).content.decode()

    for html in (overview, incidents, admin_index):
        assert "alpha" not in html
        assert "bravo" not in html
    assert nobody.get(reverse("polling:poller")).status_code == 403
    changelist = reverse("admin:projects_project_changelist")
    assert nobody.get(changelist).status_code == 403
    assert (
        nobody.get(reverse("dashboard:project", args=[a.project.pk])).status_code == 404
    )


def test_a_viewer_has_no_edit_controls_in_the_admin(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    changelist = viewer.get(reverse("admin:projects_project_changelist"))
    change = viewer.get(admin_change(a.project))

    html = changelist.content.decode()
    assert "alpha-site" in html
    assert "bravo" not in html
    assert reverse("admin:projects_project_add") not in html
    assert "Enable selected projects" not in html
    assert 'name="_save"' not in change.content.decode()


def test_an_editor_changes_their_teams_project(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    page = editor.get(admin_change(a.project))
    data = _posted(page.context["adminform"].form)
    data["name"] = "alpha-renamed"

    response = editor.post(admin_change(a.project), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    a.project.refresh_from_db()
    assert a.project.name == "alpha-renamed"
    assert a.project.team == a.team


def test_an_editor_cannot_reach_another_teams_project(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    response = editor.post(admin_change(b.project), {"name": "stolen"})

    assert response.status_code == 302  # the admin's "does not exist" redirect
    b.project.refresh_from_db()
    assert b.project.name == "bravo-site"


def test_a_project_added_by_an_editor_belongs_to_the_team_and_its_channels(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    form = editor.get(reverse("admin:projects_project_add")).context["adminform"].form

    offered = {channel.name for channel in form.fields["channels"].queryset}
    assert offered == {"alpha-hook"}
    data = _posted(form)
    data.update(name="alpha-new", url="http://127.0.0.1:9/new")
    data["channels"] = [b.channel.pk]  # another team's: not a valid choice
    refused = editor.post(reverse("admin:projects_project_add"), data)
    assert refused.status_code == 200
    assert "channels" in refused.context["adminform"].form.errors

    data["channels"] = [a.channel.pk]
    editor.post(reverse("admin:projects_project_add"), data)
    created = Project.objects.get(name="alpha-new")
    assert created.team == a.team
    assert list(created.channels.all()) == [a.channel]


def test_a_name_is_unique_within_a_team_only(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    form = editor.get(reverse("admin:projects_project_add")).context["adminform"].form
    data = _posted(form)

    data.update(name="bravo-site", url="http://127.0.0.1:9/x")
    assert editor.post(reverse("admin:projects_project_add"), data).status_code == 302
    data.update(name="alpha-site")
    taken = editor.post(reverse("admin:projects_project_add"), data)
    assert taken.status_code == 200
    assert taken.context["adminform"].form.errors == {
        "name": ["This team already has a project with this name."]
    }


def test_a_new_project_gets_its_own_teams_default_channels_only(a, b):
    project = Project.objects.create(
        team=a.team, name="alpha-2", url="http://127.0.0.1:9/2"
    )

    assert list(project.channels.all()) == [a.channel]


def test_an_incident_of_a_teams_project_notifies_that_teams_channel_only(a, b):
    project = Project.objects.create(
        team=a.team, name="alpha-down", url="http://127.0.0.1:9/d", failure_threshold=1
    )
    # Even a link to another team's channel (no form offers one) is ignored.
    project.channels.add(b.channel)
    store = DatabaseResultStore()

    store.save([outcome(project.pk, up=False, at=0, code=503)])

    told = Notification.objects.filter(project=project, event="incident.opened")
    assert [n.channel for n in told] == [a.channel]


def test_a_viewer_cannot_write_anything(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    add = viewer.post(reverse("admin:projects_project_add"), {"name": "x"})
    change = viewer.post(admin_change(a.project), {"name": "x"})
    delete = viewer.post(
        reverse("admin:projects_project_delete", args=[a.project.pk]), {"post": "yes"}
    )
    action = viewer.post(
        reverse("admin:projects_project_changelist"),
        {"action": "disable_projects", "_selected_action": [a.project.pk]},
    )

    assert (add.status_code, change.status_code, delete.status_code) == (403, 403, 403)
    assert action.status_code in (200, 302)
    a.project.refresh_from_db()
    assert a.project.name == "alpha-site"
    assert a.project.enabled


def test_a_manager_manages_members_and_an_editor_does_not(a, b):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    member(b.team, Role.VIEWER, "bravo-person")
    members = reverse("admin:projects_membership_changelist")

    listed = manager.get(members).content.decode()

    assert "eddie" in listed
    assert "bravo-person" not in listed
    assert editor.get(members).status_code == 403


def _posted(form) -> dict:
    """What the browser would post for `form` as the page shows it."""
    data = {}
    for name, _field in form.fields.items():
        value = form[name].value()
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            data[name] = [str(v) for v in value]
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = value
    return data


def test_an_all_projects_window_covers_its_own_teams_projects_only(a, b):
    now = timezone.now()
    MaintenanceWindow.objects.create(
        team=a.team,
        name="alpha-everything",
        all_projects=True,
        starts_at=now - timedelta(hours=1),
        ends_at=now + timedelta(hours=1),
    )

    schedule = MaintenanceSchedule.load(now, now)

    assert schedule.covers(a.project.pk, now)
    assert not schedule.covers(b.project.pk, now)
    assert schedule.covered_projects(now) == {a.project.pk}


def test_yaml_import_and_export_stay_within_one_team(a, b):
    text = export_yaml(a.team)
    assert "alpha-site" in text
    assert "bravo" not in text

    # A's channel is not B's to name.
    with pytest.raises(InvalidFile):
        import_projects(text, team=b.team)
    # The same names in another team are other objects, not changes.
    plan = import_projects(
        "version: 1\ntags:\n- name: alpha-tag\nprojects:\n- name: alpha-site\n"
        "  url: http://127.0.0.1:9/b\n  tags: [alpha-tag]\n",
        team=b.team,
    )

    assert plan.summary() == "2 created, 0 changed, 0 disabled"
    copy = Project.objects.get(team=b.team, name="alpha-site")
    assert [tag.team for tag in copy.tags.all()] == [b.team]
    a.project.refresh_from_db()
    assert a.project.url == "http://127.0.0.1:9/alpha-path"


def test_a_private_status_page_is_for_its_own_team(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    assert viewer.get(a.page.get_absolute_url()).status_code == 200
    assert viewer.get(b.page.get_absolute_url()).status_code == 404


def test_an_editor_posts_an_incident_update_for_their_team_only(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    update = {"status": "identified", "message": "a fix is on its way"}

    ours = editor.post(reverse("status_updates:post", args=[a.incident.pk]), update)
    theirs = editor.post(reverse("status_updates:post", args=[b.incident.pk]), update)

    assert ours.status_code == 302
    assert theirs.status_code == 404
    assert a.incident.status_updates.filter(status="identified").count() == 1
    assert b.incident.status_updates.filter(status="identified").count() == 0


def test_a_managers_member_form_lists_only_the_teams_people(a, b):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    member(a.team, Role.VIEWER, "vera")
    member(b.team, Role.VIEWER, "bravo-person")

    form = manager.get(reverse("admin:projects_membership_add")).context["adminform"]

    offered = {user.username for user in form.form.fields["user"].queryset}
    assert offered == {"mona", "vera"}


def test_escalation_steps_offer_only_the_teams_channels(a, b):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    page = editor.get(admin_change(a.project))

    [steps] = [
        formset
        for formset in page.context["inline_admin_formsets"]
        if formset.formset.model.__name__ == "EscalationStep"
    ]
    offered = steps.formset.empty_form.fields["channels"].queryset
    assert {channel.name for channel in offered} == {a.channel.name}


def test_the_installs_first_team_is_trusted_and_later_ones_are_not(db):
    """A one-team install watches its own network (POLL_BLOCKED_NETWORKS
    keeps loopback and private ranges from untrusted teams)."""
    Team.objects.all().delete()

    first = Team.objects.create(name="Home", slug="home")
    later = Team.objects.create(name="Guests", slug="guests")

    assert (first.trusted, later.trusted) == (True, False)
