"""Posting status updates from /incidents/: logged in, with a CSRF token,
through the same form rules as the admin."""

from __future__ import annotations

import re

import pytest

from django.test import Client
from django.utils import timezone

from projects.models import AuditEntry, Incident, StatusUpdate
from projects.teams.audit import entries_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(make_project):
    now = timezone.now()
    return Incident.objects.create(
        project=make_project(name="api"), started_at=now, confirmed_at=now
    )


def test_the_incidents_page_offers_a_form_per_open_incident(admin_client, incident):
    html = admin_client.get("/incidents/").content.decode()

    assert f'action="/incidents/{incident.pk}/updates/"' in html
    assert "Post a status update about api" in html


def test_an_update_posted_with_its_csrf_token_is_stored(admin_user, incident):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    html = client.get("/incidents/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)

    response = client.post(
        f"/incidents/{incident.pk}/updates/",
        {"status": "identified", "message": "Found it.", "csrfmiddlewaretoken": token},
    )

    assert response.status_code == 302
    update = StatusUpdate.objects.get()
    assert (update.message, update.author) == ("Found it.", admin_user)


def test_an_update_posted_from_the_incidents_page_is_audited(admin_client, incident):
    """S4-09: updates posted from /incidents/ left no audit entry."""
    admin_client.post(
        f"/incidents/{incident.pk}/updates/",
        {"status": "identified", "message": "Found it."},
    )

    (entry,) = entries_for(StatusUpdate.objects.get())
    assert (entry.action, entry.actor_name, entry.via) == (
        AuditEntry.Action.CREATED,
        "admin",
        "dashboard",
    )
    assert entry.team_id == incident.project.team_id
    assert {"field": "message", "old": None, "new": "Found it."} in entry.changes


def test_an_update_without_a_csrf_token_is_refused(admin_user, incident):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)

    response = client.post(
        f"/incidents/{incident.pk}/updates/", {"status": "identified", "message": "x"}
    )

    assert response.status_code == 403
    assert StatusUpdate.objects.count() == 0


def test_posting_needs_a_login(client, incident):
    response = client.post(
        f"/incidents/{incident.pk}/updates/", {"status": "identified", "message": "x"}
    )

    assert response.status_code == 302
    assert StatusUpdate.objects.count() == 0


def test_a_bad_update_is_reported_not_stored(admin_client, incident):
    response = admin_client.post(
        f"/incidents/{incident.pk}/updates/",
        {"status": "fixed?", "message": ""},
        follow=True,
    )

    assert "The update was not posted" in response.content.decode()
    assert StatusUpdate.objects.count() == 0
