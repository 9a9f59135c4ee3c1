"""Incident.updated_at: what a status page shows of an incident changes
it, by hand or by the writer, so the page's version changes with it; a
failed poll more of an open incident does not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.announcements.updates import post_update
from projects.models import Incident, Project, StatusUpdate
from tests.support.outcomes import outcome
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def empty_cache():
    from django.core.cache import cache

    cache.clear()


def test_a_manual_incidents_new_title_shows_on_the_next_request(client):
    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    Project.objects.update(state=Project.State.UP)
    now = timezone.now()
    incident = Incident.objects.create(
        project=built.projects[0],
        kind=Incident.Kind.MANUAL,
        title="Slow logins",
        started_at=now,
        confirmed_at=now,
    )
    assert "Slow logins" in client.get("/status/acme/").content.decode()

    incident.title = "Logins fail for some users"
    incident.save()  # as the admin does

    html = client.get("/status/acme/").content.decode()
    assert "Logins fail for some users" in html
    assert "Slow logins" not in html


def test_the_writer_moves_updated_at_when_it_resolves_not_when_it_extends(
    make_project,
):
    project = make_project(failure_threshold=1)
    store = DatabaseResultStore()
    store.save([outcome(project.pk, up=False, at=0)])
    Incident.objects.update(updated_at=LONG_AGO)

    store.save([outcome(project.pk, up=False, at=20)])
    extended = Incident.objects.get()
    assert (extended.failed_polls, extended.updated_at) == (2, LONG_AGO)

    store.save([outcome(project.pk, up=True, at=40)])
    resolved = Incident.objects.get()
    assert resolved.resolved_at is not None
    assert resolved.updated_at > LONG_AGO


def test_a_resolving_update_moves_updated_at(make_project):
    now = timezone.now()
    incident = Incident.objects.create(
        project=make_project(),
        kind=Incident.Kind.MANUAL,
        started_at=now,
        confirmed_at=now,
    )
    Incident.objects.update(updated_at=LONG_AGO)

    post_update(StatusUpdate(incident=incident, status="resolved", message="Fixed."))

    assert Incident.objects.get().updated_at > LONG_AGO
