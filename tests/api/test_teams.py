"""An API key sees and changes only its team's objects (issue #30, item 3):
another team's id is a 404, its objects are in no list, a related id or
name of another team is a field error like an unknown one, and a create
lands in the key's team. Every change through the API is in the audit log,
signed by the key, via "api"."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from rest_framework.test import APIClient

from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from projects.models import (
    ApiKey,
    AuditEntry,
    MaintenanceWindow,
    NotificationChannel,
    Project,
    Tag,
    Team,
)
from projects.models.api_keys import hash_key
from projects.models.teams import default_team_id
from projects.teams.audit import MASK
from tests.support.migrations import migrate_to

pytestmark = pytest.mark.django_db

API = "/api/v1"


def key_client(team, scope: str, name: str = "") -> APIClient:
    _, key = ApiKey.issue(name or f"{team.slug}-{scope}", scope, team)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def a_write(a, b):
    return key_client(a.team, "write", "alpha-deploy")


@pytest.fixture
def a_read(a, b):
    return key_client(a.team, "read")


def objects_urls(team_objects) -> list[str]:
    """The detail URL of every kind of object the API shows, for one team."""
    t = team_objects
    return [
        f"{API}/projects/{t.project.pk}/",
        f"{API}/projects/{t.project.pk}/results/",
        f"{API}/projects/{t.project.pk}/uptime/",
        f"{API}/incidents/{t.incident.pk}/",
        f"{API}/channels/{t.channel.pk}/",
        f"{API}/maintenance-windows/{t.window.pk}/",
        f"{API}/tags/{t.tag.pk}/",
    ]


def writes(team_objects) -> list[tuple[str, str]]:
    """(method, url) of every change the API offers on one team's objects."""
    t = team_objects
    changes = []
    for url in [
        f"{API}/projects/{t.project.pk}/",
        f"{API}/channels/{t.channel.pk}/",
        f"{API}/maintenance-windows/{t.window.pk}/",
        f"{API}/tags/{t.tag.pk}/",
    ]:
        changes += [("put", url), ("patch", url), ("delete", url)]
    return [
        *changes,
        ("post", f"{API}/projects/{t.project.pk}/pause/"),
        ("post", f"{API}/projects/{t.project.pk}/resume/"),
        ("post", f"{API}/incidents/{t.incident.pk}/acknowledge/"),
        ("post", f"{API}/channels/{t.channel.pk}/test/"),
    ]


LISTS = [
    f"{API}/projects/",
    f"{API}/projects/?search=site",
    f"{API}/incidents/",
    f"{API}/channels/",
    f"{API}/maintenance-windows/",
    f"{API}/tags/",
]


def test_a_key_reads_its_teams_objects(a_read, a):
    for url in objects_urls(a):
        assert a_read.get(url).status_code == 200, url
    assert "alpha-site" in a_read.get(f"{API}/projects/").content.decode()


def test_another_teams_object_is_a_404_for_every_kind(a_read, b):
    for url in objects_urls(b):
        response = a_read.get(url)
        assert response.status_code == 404, url
        assert "bravo" not in response.content.decode(), url


def test_another_teams_object_cannot_be_changed(a_write, b):
    for method, url in writes(b):
        response = getattr(a_write, method)(url, {"name": "taken"}, format="json")
        assert response.status_code == 404, (method, url)

    b.project.refresh_from_db()
    assert (b.project.name, b.project.enabled) == ("bravo-site", True)
    assert b.incident.acknowledged_at is None
    assert NotificationChannel.objects.filter(pk=b.channel.pk).exists()
    assert Tag.objects.filter(pk=b.tag.pk).exists()
    assert not AuditEntry.objects.exists()


def test_another_teams_objects_are_in_no_list(a_read, a, b):
    lists = [*LISTS, f"{API}/incidents/?project={b.project.pk}"]
    for url in lists:
        response = a_read.get(url)
        assert response.status_code == 200, url
        assert "bravo" not in response.content.decode(), url
    names = [p["name"] for p in a_read.get(f"{API}/projects/").json()["results"]]
    assert names == ["alpha-site"]
    assert a_read.get(f"{API}/projects/?tag=bravo-tag").json()["results"] == []


def test_a_create_lands_in_the_keys_team(a_write, a):
    made = {
        "projects": {"name": "new-site", "url": "http://127.0.0.1:9/new"},
        "tags": {"name": "new-tag", "color": "#112233"},
        "channels": {"name": "new-hook", "kind": "email", "url": "a@example.test"},
        "maintenance-windows": {
            "name": "new-window",
            "starts_at": "2030-01-01T00:00:00Z",
            "ends_at": "2030-01-01T01:00:00Z",
            "projects": [a.project.pk],
        },
    }
    models = {
        "projects": Project,
        "tags": Tag,
        "channels": NotificationChannel,
        "maintenance-windows": MaintenanceWindow,
    }
    for kind, data in made.items():
        response = a_write.post(f"{API}/{kind}/", data, format="json")
        assert response.status_code == 201, (kind, response.json())
        created = models[kind].objects.get(pk=response.json()["id"])
        assert created.team == a.team, kind


def test_a_new_project_gets_only_its_teams_default_channels(a_write, a, b):
    response = a_write.post(
        f"{API}/projects/",
        {"name": "defaults", "url": "http://127.0.0.1:9/"},
        format="json",
    )

    assert response.json()["channels"] == [a.channel.pk]


def test_another_teams_related_objects_are_field_errors(a_write, a, b):
    unknown = a_write.post(
        f"{API}/projects/",
        {"name": "x", "url": "http://127.0.0.1:9/", "channels": [999999]},
        format="json",
    )
    foreign = a_write.post(
        f"{API}/projects/",
        {"name": "x", "url": "http://127.0.0.1:9/", "channels": [b.channel.pk]},
        format="json",
    )
    foreign_tag = a_write.post(
        f"{API}/projects/",
        {"name": "x", "url": "http://127.0.0.1:9/", "tags": ["bravo-tag"]},
        format="json",
    )
    MaintenanceWindow.objects.filter(pk=a.window.pk).update(
        ends_at=a.window.starts_at + timedelta(hours=1)
    )
    foreign_project = a_write.patch(
        f"{API}/maintenance-windows/{a.window.pk}/",
        {"projects": [b.project.pk]},
        format="json",
    )

    assert unknown.status_code == foreign.status_code == 400
    assert list(foreign.json()) == ["channels"]
    assert foreign.json()["channels"] == [
        message.replace("999999", str(b.channel.pk))
        for message in unknown.json()["channels"]
    ]
    assert foreign_tag.status_code == 400
    assert foreign_tag.json() == {
        "tags": ["No tag is named “bravo-tag”; create it first."]
    }
    assert foreign_project.status_code == 400
    assert list(foreign_project.json()) == ["projects"]
    assert not Project.objects.filter(name="x").exists()
    assert list(a.window.projects.all()) == [a.project]


def test_the_upsert_by_name_is_per_team(a_write, a, b):
    url = f"{API}/projects/by-name/bravo-site/"
    data = {"url": "http://127.0.0.1:9/alpha-own"}

    first = a_write.put(url, data, format="json")
    again = a_write.put(url, data, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    mine = Project.objects.get(pk=first.json()["id"])
    assert mine.team == a.team
    assert again.json()["id"] == mine.pk
    b.project.refresh_from_db()
    assert b.project.url == "http://127.0.0.1:9/bravo-path"


def test_a_name_taken_in_the_team_is_an_error_on_name(a_write, a, b):
    taken = a_write.post(
        f"{API}/projects/",
        {"name": "alpha-site", "url": "http://127.0.0.1:9/"},
        format="json",
    )
    elsewhere = a_write.post(
        f"{API}/tags/", {"name": "bravo-tag", "color": "#000000"}, format="json"
    )

    assert taken.status_code == 400
    assert taken.json() == {"name": ["This team already has a project with this name."]}
    assert elsewhere.status_code == 201


# The audit log --------------------------------------------------------------


def entries(obj) -> list[AuditEntry]:
    return list(
        AuditEntry.objects.filter(
            object_type=obj._meta.label_lower, object_id=str(obj.pk)
        ).order_by("pk")
    )


def test_api_changes_to_a_project_are_recorded_by_the_key(a_write, a):
    url = f"{API}/projects/{a.project.pk}/"

    a_write.patch(url, {"name": "alpha-renamed"}, format="json")
    a_write.post(f"{url}pause/")
    a_write.post(f"{url}pause/")  # nothing changes: nothing recorded
    a_write.post(f"{url}resume/")
    a_write.delete(url)

    recorded = entries(a.project)
    assert [(e.action, e.actor_name, e.via) for e in recorded] == [
        ("changed", "alpha-deploy", "api"),
        ("changed", "alpha-deploy", "api"),
        ("changed", "alpha-deploy", "api"),
        ("deleted", "alpha-deploy", "api"),
    ]
    assert recorded[0].changes == [
        {"field": "name", "old": "alpha-site", "new": "alpha-renamed"}
    ]
    assert recorded[1].changes == [{"field": "enabled", "old": True, "new": False}]
    assert recorded[2].changes == [{"field": "enabled", "old": False, "new": True}]
    assert all(e.team == a.team and e.actor is None for e in recorded)


def test_api_creates_and_deletes_of_every_kind_are_recorded(a_write, a):
    tag = a_write.post(f"{API}/tags/", {"name": "t", "color": "#123456"}, format="json")
    window = a_write.post(
        f"{API}/maintenance-windows/",
        {
            "name": "w",
            "starts_at": "2030-01-01T00:00:00Z",
            "ends_at": "2030-01-01T01:00:00Z",
            "all_projects": True,
        },
        format="json",
    )
    project = a_write.put(
        f"{API}/projects/by-name/p/", {"url": "http://127.0.0.1:9/"}, format="json"
    )
    a_write.delete(f"{API}/tags/{a.tag.pk}/")
    a_write.put(
        f"{API}/maintenance-windows/{window.json()['id']}/",
        {**window.json(), "name": "w2"},
        format="json",
    )

    made = AuditEntry.objects.filter(via="api").order_by("pk")
    assert [(e.object_type, e.object_repr, e.action) for e in made] == [
        ("projects.tag", "t", "created"),
        ("projects.maintenancewindow", "w", "created"),
        ("projects.project", "p", "created"),
        ("projects.tag", "alpha-tag", "deleted"),
        ("projects.maintenancewindow", "w2", "changed"),
    ]
    assert {e.actor_name for e in made} == {"alpha-deploy"}
    assert tag.status_code == project.status_code == 201


def test_an_api_channel_change_is_recorded_with_secrets_masked(a_write, a):
    created = a_write.post(
        f"{API}/channels/",
        {"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/token-123"},
        format="json",
    )
    secret = created.json()["generated_secret"]
    a_write.patch(
        f"{API}/channels/{a.channel.pk}/",
        {"url": "http://127.0.0.1:9/token-456"},
        format="json",
    )

    made, changed = AuditEntry.objects.filter(via="api").order_by("pk")
    assert made.action == "created"
    assert {"field": "url", "old": "", "new": MASK} in made.changes
    assert {"field": "secret", "old": "", "new": MASK} in made.changes
    assert changed.changes == [{"field": "url", "old": MASK, "new": MASK}]
    stored = str(list(AuditEntry.objects.values_list("changes", flat=True)))
    for clear in ("token-123", "token-456", "hook-token", secret):
        assert clear not in stored


# createapikey --team --------------------------------------------------------


def issued(*args: str) -> ApiKey:
    out = StringIO()
    call_command("createapikey", *args, stdout=out)
    return ApiKey.objects.get(key_hash=hash_key(out.getvalue().strip()))


def test_createapikey_makes_a_key_of_the_named_team(a, b):
    key = issued("deploy", "--scope", "write", "--team", "bravo")

    assert (key.team, key.scope) == (b.team, "write")


def test_createapikey_needs_no_team_when_the_install_has_one():
    Team.objects.exclude(pk=default_team_id()).delete()

    assert issued("deploy").team_id == default_team_id()


def test_createapikey_needs_a_team_when_there_are_several(a, b):
    with pytest.raises(CommandError, match="several teams: name one with --team"):
        call_command("createapikey", "deploy")
    assert not ApiKey.objects.exists()


def test_createapikey_refuses_an_unknown_team(a):
    with pytest.raises(CommandError, match="No team has the slug “nope”"):
        call_command("createapikey", "deploy", "--team", "nope")
    assert not ApiKey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_existing_keys_go_into_the_first_team():
    before, after = ("projects", "0027_teams"), ("projects", "0028_apikey_team")
    old_apps = migrate_to(before)
    OldTeam = old_apps.get_model("projects", "Team")
    # An earlier test's flush may have removed the migration's Default.
    first = OldTeam.objects.order_by("pk").first() or OldTeam.objects.create(
        name="First", slug="first"
    )
    OldTeam.objects.create(name="Later", slug="later")
    old_apps.get_model("projects", "ApiKey").objects.create(
        name="old", scope="read", key_hash="0" * 64, prefix="um_old"
    )
    try:
        new_apps = migrate_to(after)
        key = new_apps.get_model("projects", "ApiKey").objects.get()
        team_id = key.team_id
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("projects")
        migrate_to(leaf[0])

    assert team_id == first.pk
