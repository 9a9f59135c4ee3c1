"""Every page of the dashboard and the admin, walked as a viewer of team A,
and every URL of the API, as team A's read key and write key: nothing of
team B is listed, shown or changeable, and every write is refused. The
admin's pages come from its registry and the API's from its router, so a
model or resource added later is walked too."""

from __future__ import annotations

import contextlib

import pytest
from rest_framework.test import APIClient

from django.contrib import admin
from django.urls import NoReverseMatch, reverse

from projects.api.urls import router as api_router
from projects.models import (
    ApiKey,
    Incident,
    MaintenanceWindow,
    Membership,
    Notification,
    NotificationChannel,
    Project,
    Role,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
    Tag,
    Team,
)
from projects.teams.scoping import for_team
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

WATCHED = [
    ApiKey,
    Team,
    Membership,
    Project,
    Tag,
    NotificationChannel,
    MaintenanceWindow,
    Incident,
    Notification,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
]


@pytest.fixture
def viewer(a, b):
    return client_of(member(a.team, Role.VIEWER, "vera"))


def snapshot() -> list:
    """Every watched row, with its many-to-many links."""
    rows = []
    for model in WATCHED:
        for obj in model.objects.order_by("pk"):
            values = {f.attname: getattr(obj, f.attname) for f in model._meta.fields}
            for m2m in model._meta.many_to_many:
                values[m2m.name] = sorted(getattr(obj, m2m.name).values_list("pk"))
            rows.append((model.__name__, values))
    return rows


def admin_pages() -> list[tuple[str, object]]:
    """(url, model admin) of every list, add, change, delete and history
    page of every registered model, for every stored object."""
    pages = []
    for model, model_admin in admin.site._registry.items():
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        pages.append((reverse(f"{prefix}_changelist"), model_admin))
        pages.append((reverse(f"{prefix}_add"), model_admin))
        for pk in model._default_manager.values_list("pk", flat=True)[:20]:
            for view in ("change", "delete", "history"):
                with contextlib.suppress(NoReverseMatch):
                    pages.append((reverse(f"{prefix}_{view}", args=[pk]), model_admin))
    return pages


def dashboard_pages(a, b) -> list[str]:
    return [
        reverse("dashboard:overview"),
        reverse("dashboard:overview") + "?q=site",  # both teams' names match
        reverse("dashboard:project", args=[a.project.pk]),
        reverse("dashboard:project", args=[b.project.pk]),
        reverse("incidents:list"),
        reverse("incidents:list") + f"?project={b.project.pk}",
        reverse("polling:poller"),
        b.page.get_absolute_url(),
        reverse("admin:index"),
        reverse("admin:projects_project_export_yaml"),
        reverse("admin:projects_project_import_yaml"),
        reverse("admin:autocomplete") + "?app_label=projects&model_name="
        "maintenancewindow&field_name=projects&term=",
    ]


def test_a_viewer_sees_nothing_of_another_team_anywhere(viewer, a, b):
    pages = dashboard_pages(a, b) + [url for url, _ in admin_pages()]
    assert len(pages) > 60

    for url in pages:
        response = viewer.get(url)
        assert response.status_code < 500, url
        body = response.content.decode()
        assert "bravo" not in body.lower(), url
        assert a.channel.secret not in body, url


def test_a_viewer_reads_their_teams_pages(viewer, a, b):
    for url in dashboard_pages(a, b)[:3]:
        assert viewer.get(url).status_code == 200, url
    project = reverse("admin:projects_project_change", args=[a.project.pk])
    assert "alpha-site" in viewer.get(project).content.decode()


def test_every_write_is_refused_to_a_viewer(viewer, a, b):
    before = snapshot()
    refused = 0

    for url, model_admin in admin_pages():
        posts = [{"name": "hacked", "post": "yes", "_save": "Save"}]
        if url.endswith(("/", "changelist/")) and "change" not in url.split("/")[-2:]:
            every_pk = model_admin.model._default_manager.values_list("pk", flat=True)
            selected = [str(pk) for pk in every_pk]
            posts += [
                {"action": action, "_selected_action": selected, "post": "yes"}
                for action in [*(model_admin.actions or []), "delete_selected"]
            ]
        for data in posts:
            response = viewer.post(url, data)
            assert response.status_code < 500, url
            refused += response.status_code in (302, 400, 403, 404)
    for url in [
        reverse("admin:projects_project_import_yaml"),
        reverse("teams:switch"),
    ]:
        response = viewer.post(
            url, {"text": "version: 1\nprojects: []\n", "apply": "1", "team": b.team.pk}
        )
        assert response.status_code in (403, 404), url
    acknowledge = reverse("incidents:acknowledge", args=[b.incident.pk])
    assert viewer.post(acknowledge).status_code == 404
    for incident in (a.incident, b.incident):
        update = reverse("status_updates:post", args=[incident.pk])
        posted = viewer.post(update, {"status": "resolved", "message": "x"})
        assert posted.status_code == 403

    assert refused > 60
    assert snapshot() == before


# The API, as team A's read key and write key --------------------------------


def api_client(team, scope: str) -> APIClient:
    _, key = ApiKey.issue(f"{team.slug}-{scope}", scope, team)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def api_urls(team) -> list[str]:
    """The list URL of every resource the API's router serves, and the
    detail and action URLs of each of `team`'s objects: a resource added
    later is walked too."""
    urls = []
    for prefix, viewset, _ in api_router.registry:
        model = viewset.serializer_class.Meta.model
        base = f"/api/v1/{prefix}/"
        urls.append(base)
        for pk in for_team(model._default_manager.all(), team).values_list(
            "pk", flat=True
        ):
            urls.append(f"{base}{pk}/")
            urls += [
                f"{base}{pk}/{extra.url_path}/" for extra in viewset.get_extra_actions()
            ]
    for pk in for_team(Project.objects.all(), team).values_list("pk", flat=True):
        urls += [f"/api/v1/projects/{pk}/results/", f"/api/v1/projects/{pk}/uptime/"]
    return urls


def is_list(url: str) -> bool:
    return url.count("/") == 4  # /api/v1/name/


@pytest.mark.parametrize("scope", ["read", "write"])
def test_an_api_key_of_a_reads_nothing_of_b(a, b, scope):
    client = api_client(a.team, scope)
    urls = api_urls(a.team) + api_urls(b.team)
    assert len(urls) > 30

    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, url
        assert "bravo" not in response.content.decode().lower(), url
        assert b.channel.secret not in response.content.decode(), url
    for url in api_urls(b.team):
        if not is_list(url):
            assert client.get(url).status_code in (404, 405), url


@pytest.mark.parametrize("scope", ["read", "write"])
def test_an_api_key_of_a_changes_nothing_of_b(a, b, scope):
    client = api_client(a.team, scope)
    client.get("/api/v1/tags/")  # the key's last_used_at is written now
    before = snapshot()
    tried = 0

    for url in api_urls(b.team):
        if is_list(url):
            continue  # a create there would be A's
        for method in ("put", "patch", "delete", "post"):
            response = getattr(client, method)(url, {"name": "hacked"}, format="json")
            tried += 1
            refused = (403,) if scope == "read" else (404, 405)
            assert response.status_code in refused, (method, url)

    assert tried > 30
    assert snapshot() == before
