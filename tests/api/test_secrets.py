"""What keys see of secrets: project headers masked for read keys (S4-15),
subscribers' addresses never shown to read keys (S4-10)."""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.announcements.subscriptions import subscribe
from projects.models import StatusPage
from projects.notifications.masking import MASK

pytestmark = pytest.mark.django_db

HEADERS = {"Authorization": "Bearer hdrsecretA", "Accept": "application/json"}


def test_a_read_key_sees_header_names_with_values_masked(read_api, make_project):
    project = make_project(headers=HEADERS)

    shown = read_api.get(f"/api/v1/projects/{project.pk}/")
    listed = read_api.get("/api/v1/projects/")

    assert shown.json()["headers"] == {"Authorization": MASK, "Accept": MASK}
    assert "hdrsecretA" not in listed.content.decode()


def test_a_write_key_sees_the_headers_it_may_change(write_api, make_project):
    project = make_project(headers=HEADERS)

    assert write_api.get(f"/api/v1/projects/{project.pk}/").json()["headers"] == (
        HEADERS
    )


def test_a_read_key_does_not_see_a_subscribers_address(read_api, write_api):
    page = StatusPage.objects.create(title="Shop", slug="shop")
    subscribe(page, email="ann@example.test", address=None, now=timezone.now())

    read = read_api.get("/api/v1/channels/")
    written = write_api.get("/api/v1/channels/")

    assert "ann@example.test" not in read.content.decode()
    (channel,) = read.json()["results"]
    assert channel["destination"] == f"{MASK}@example.test"
    assert written.json()["results"][0]["destination"] == "ann@example.test"
