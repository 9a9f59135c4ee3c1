"""Status pages' models, their migration and their admin."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from django.utils import timezone

from projects.models import Incident, Project, StatusUpdate

BEFORE = ("projects", "0022_tags")
AFTER = ("projects", "0024_status_pages")


def migrate_to(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_existing_projects_distinct_badge_keys():
    old = migrate_to(BEFORE)
    for number in range(3):
        old.get_model("projects", "Project").objects.create(
            name=f"p{number}", url="http://127.0.0.1:9/"
        )
    try:
        new = migrate_to(AFTER)
        keys = list(
            new.get_model("projects", "Project").objects.values_list(
                "badge_key", flat=True
            )
        )
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("projects")
        migrate_to(leaf[0])

    assert len(set(keys)) == 3
    assert all(len(key) >= 20 for key in keys)


@pytest.mark.django_db
def test_the_admin_regenerates_a_projects_badge_key(admin_client, make_project):
    project = make_project(name="api")
    old_key = project.badge_key

    response = admin_client.post(
        reverse("admin:projects_project_changelist"),
        {"action": "regenerate_badge_keys", "_selected_action": [project.pk]},
    )

    assert response.status_code == 302
    project.refresh_from_db()
    assert project.badge_key != old_key


@pytest.mark.django_db
def test_an_update_posted_in_the_incident_admin_has_its_author(
    admin_client, admin_user, make_project
):
    project = make_project(name="api")
    now = timezone.now()
    incident = Incident.objects.create(
        project=project, started_at=now, confirmed_at=now
    )
    url = reverse("admin:projects_incident_change", args=[incident.pk])
    form = {
        "status_updates-TOTAL_FORMS": "1",
        "status_updates-INITIAL_FORMS": "0",
        "status_updates-0-status": "identified",
        "status_updates-0-message": "The **database** is full.",
        "status_updates-0-incident": incident.pk,
    }

    response = admin_client.post(url, form)

    assert response.status_code == 302, response.content.decode()[:3000]
    update = StatusUpdate.objects.get()
    assert (update.status, update.author) == ("identified", admin_user)


@pytest.mark.django_db
def test_a_manual_incident_is_added_in_the_admin_and_resolved_by_an_update(
    admin_client, make_project
):
    project = make_project(name="api")
    started = timezone.now() - timedelta(minutes=5)
    response = admin_client.post(
        reverse("admin:projects_incident_add"),
        {
            "project": project.pk,
            "title": "Slow logins",
            "started_at_0": started.strftime("%Y-%m-%d"),
            "started_at_1": started.strftime("%H:%M:%S"),
            "status_updates-TOTAL_FORMS": "1",
            "status_updates-INITIAL_FORMS": "0",
            "status_updates-0-status": "resolved",
            "status_updates-0-message": "Fixed.",
        },
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    incident = Incident.objects.get()
    assert incident.kind == Incident.Kind.MANUAL
    assert incident.resolved_at is not None
    assert Project.objects.count() == 1


@pytest.mark.django_db
def test_a_page_with_a_section_is_made_in_the_admin(admin_client, make_project):
    from projects.models import StatusPage

    project = make_project(name="api")
    assert admin_client.get(reverse("admin:projects_statuspage_add")).status_code == 200

    response = admin_client.post(
        reverse("admin:projects_statuspage_add"),
        {
            "title": "Acme",
            "slug": "acme",
            "description": "",
            "logo_url": "",
            "footer": "",
            "visibility": "public",
            "custom_domain": "Status.Example.com/x",
            "show_uptime_days": "90",
            "sections-TOTAL_FORMS": "1",
            "sections-INITIAL_FORMS": "0",
            "sections-0-name": "API",
            "sections-0-position": "0",
            "sections-0-projects": [project.pk],
        },
    )
    assert "Enter a host name such as status.example.com" in response.content.decode()

    response = admin_client.post(
        reverse("admin:projects_statuspage_add"),
        {
            "title": "Acme",
            "slug": "acme",
            "visibility": "public",
            "custom_domain": "status.example.com",
            "show_uptime_days": "90",
            "sections-TOTAL_FORMS": "1",
            "sections-INITIAL_FORMS": "0",
            "sections-0-name": "API",
            "sections-0-position": "0",
            "sections-0-projects": [project.pk],
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = StatusPage.objects.get()
    assert list(page.sections.get().projects.all()) == [project]

    # The slug's help names the address (it read "/status//" before).
    add = admin_client.get(reverse("admin:projects_statuspage_add")).content.decode()
    assert "The page is at <code>/status/your-slug/</code>." in add
    change = reverse("admin:projects_statuspage_change", args=[page.pk])
    changed = admin_client.get(change).content.decode()
    assert "The page is at <code>/status/acme/</code>." in changed


@pytest.mark.django_db
def test_the_incident_and_subscriber_lists_open(admin_client, make_project):
    now = timezone.now()
    Incident.objects.create(project=make_project(), started_at=now, confirmed_at=now)

    for name in ("incident", "subscriber", "statuspage"):
        url = reverse(f"admin:projects_{name}_changelist")
        assert admin_client.get(url).status_code == 200
    project = Project.objects.get()
    url = reverse("admin:projects_project_change", args=[project.pk])
    assert (
        f"/badge/{project.badge_key}/status.svg"
        in admin_client.get(url).content.decode()
    )
