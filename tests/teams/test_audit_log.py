"""The audit log: each change through the admin, the API or an import is
recorded with its author and what changed, field by field, secrets masked;
it shows on the object's admin page, and a team's managers read the team's
log."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from django.urls import reverse

from projects.as_code.apply import import_projects
from projects.models import ApiKey, AuditEntry, Role
from projects.teams.audit import MASK
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db


def change(obj) -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])


def posted(form) -> dict:
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue
        if isinstance(value, (list, tuple)):
            data[name] = [str(v) for v in value]
        else:
            data[name] = "on" if value is True else value
    return data


def test_an_admin_change_is_recorded_with_its_author_and_shown(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    form = editor.get(change(a.project)).context["adminform"].form
    data = posted(form)
    data.update(name="alpha-renamed", url="http://127.0.0.1:9/moved")

    assert editor.post(change(a.project), data).status_code == 302

    entry = AuditEntry.objects.get(object_id=str(a.project.pk))
    assert (entry.actor_name, entry.via, entry.action) == ("eddie", "admin", "changed")
    assert entry.team == a.team
    assert {"field": "name", "old": "alpha-site", "new": "alpha-renamed"} in (
        entry.changes
    )
    assert [c["field"] for c in entry.changes] == ["name", "url"]
    page = editor.get(change(a.project)).content.decode()
    assert "eddie (admin)" in page
    assert "name: alpha-site → alpha-renamed" in page


def test_an_import_change_is_recorded_as_the_import(a):
    import_projects(
        "version: 1\nprojects:\n- name: alpha-site\n  url: http://127.0.0.1:9/new\n"
        "  tags: [alpha-tag]\n  channels: [alpha-hook]\n",
        team=a.team,
    )

    entry = AuditEntry.objects.get(object_id=str(a.project.pk))
    assert (entry.actor_name, entry.via) == ("importprojects", "import")
    assert entry.changes == [
        {
            "field": "url",
            "old": "http://127.0.0.1:9/alpha-path",
            "new": "http://127.0.0.1:9/new",
        }
    ]


def test_a_channel_secret_change_is_recorded_masked(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    url = change(a.channel)
    data = posted(editor.get(url).context["adminform"].form)
    new_secret = "whsec_" + "A" * 43 + "="
    data.update(secret=new_secret, url="http://127.0.0.1:9/alpha-new-token")

    assert editor.post(url, data).status_code == 302

    entry = AuditEntry.objects.get(object_type="projects.notificationchannel")
    assert {c["field"]: (c["old"], c["new"]) for c in entry.changes} == {
        "url": (MASK, MASK),
        "secret": (MASK, MASK),
    }
    stored = str(list(AuditEntry.objects.values_list("changes", flat=True)))
    assert "alpha-new-token" not in stored
    assert new_secret not in stored
    assert a.channel.secret not in stored


def test_a_deletion_and_an_action_are_recorded(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    changelist = reverse("admin:projects_project_changelist")

    editor.post(
        changelist,
        {"action": "disable_projects", "_selected_action": [a.project.pk]},
    )
    editor.post(reverse("admin:projects_tag_delete", args=[a.tag.pk]), {"post": "yes"})

    disabled = AuditEntry.objects.get(object_type="projects.project")
    assert disabled.changes == [{"field": "enabled", "old": True, "new": False}]
    deleted = AuditEntry.objects.get(object_type="projects.tag")
    assert (deleted.action, deleted.object_repr) == ("deleted", "alpha-tag")


def test_managers_read_their_teams_log_and_nobody_else_does(a, b):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    for team in (a, b):
        import_projects(
            f"version: 1\ntags:\n- name: {team.team.slug}-new-tag\n", team=team.team
        )
    log = reverse("admin:projects_auditentry_changelist")

    page = manager.get(log).content.decode()

    assert "alpha-new-tag" in page
    assert "bravo" not in page
    assert editor.get(log).status_code == 403


def test_a_projects_headers_are_recorded_masked(a):
    import_projects(
        "version: 1\nprojects:\n- name: alpha-site\n  url: http://127.0.0.1:9/alpha-path\n"
        "  headers: {Authorization: Bearer tok-123}\n"
        "  tags: [alpha-tag]\n  channels: [alpha-hook]\n",
        team=a.team,
    )

    entry = AuditEntry.objects.get(object_id=str(a.project.pk))
    assert entry.changes == [{"field": "headers", "old": "", "new": MASK}]
    assert "tok-123" not in str(entry.changes)


def test_a_projects_log_shows_an_admin_change_and_an_api_change_with_authors(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    data = posted(editor.get(change(a.project)).context["adminform"].form)
    data.update(name="alpha-renamed")
    assert editor.post(change(a.project), data).status_code == 302
    _, key = ApiKey.issue("deploy-bot", "write", a.team)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    response = api.patch(
        f"/api/v1/projects/{a.project.pk}/",
        {"url": "http://127.0.0.1:9/by-api"},
        format="json",
    )

    assert response.status_code == 200
    page = editor.get(change(a.project)).content.decode()
    assert "eddie (admin)" in page
    assert "name: alpha-site → alpha-renamed" in page
    assert "deploy-bot (api)" in page
    assert "url: http://127.0.0.1:9/alpha-path → http://127.0.0.1:9/by-api" in page
    assert key not in page
