"""Every page of the dashboard and the admin, walked as a viewer of team A:
nothing of team B is listed, shown or changeable, and every write is
refused. The admin's pages come from its registry, so a model registered
later is walked too."""

from __future__ import annotations

import contextlib

import pytest

from django.contrib import admin
from django.urls import NoReverseMatch, reverse

from projects.models import (
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
from tests.teams import client_of, make_team, member

pytestmark = pytest.mark.django_db

WATCHED = [
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
def a():
    return make_team("alpha")


@pytest.fixture
def b():
    return make_team("bravo")


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
