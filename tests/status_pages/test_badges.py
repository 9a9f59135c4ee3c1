"""Badges: valid SVG named for screen readers, 404 badges for unknown
keys, the shields.io endpoint schema, and a minute of caching."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest

from django.utils import timezone

from projects.models import HourlyRollup, Project, StatusPage
from projects.status_pages.svg import badge, text_width
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def parsed(response) -> ET.Element:
    assert response["Content-Type"].startswith("image/svg+xml")
    return ET.fromstring(response.content)


def test_a_status_badge_is_valid_svg_named_for_screen_readers(client, make_project):
    project = make_project(name="api")
    Project.objects.filter(pk=project.pk).update(state="down")

    response = client.get(f"/badge/{project.badge_key}/status.svg")

    assert response.status_code == 200
    root = parsed(response)
    assert root.get("role") == "img"
    assert root.get("aria-label") == "status: down"
    assert root.find(f"{SVG}title").text == "status: down"
    assert "max-age=60" in response["Cache-Control"]


def test_an_unknown_key_gets_a_404_that_is_still_a_badge(client):
    response = client.get("/badge/not-a-key/status.svg")

    assert response.status_code == 404
    assert parsed(response).get("aria-label") == "status: unknown"
    assert "max-age=60" in response["Cache-Control"]


def test_an_unknown_badge_name_gets_a_404_badge(client, make_project):
    project = make_project(name="api")

    response = client.get(f"/badge/{project.badge_key}/uptime-1y.svg")

    assert response.status_code == 404
    assert parsed(response).get("aria-label") == "status: unknown"


def test_an_uptime_badge_reads_the_rollups(client, make_project):
    project = make_project(name="api")
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    HourlyRollup.objects.create(
        project=project, hour=hour - timedelta(hours=2), polls=1000, failures=1
    )

    response = client.get(f"/badge/{project.badge_key}/uptime-24h.svg")

    assert parsed(response).get("aria-label") == "uptime 24h: 99.9%"


def test_response_time_and_certificate_badges(client, make_project):
    project = make_project(name="api", url="https://127.0.0.1:9/")
    now = timezone.now()
    Project.objects.filter(pk=project.pk).update(
        tls_expires_at=now + timedelta(days=40, hours=1)
    )
    HourlyRollup.objects.create(
        project=project,
        hour=now - timedelta(hours=1),
        polls=10,
        responses=10,
        response_time_sum_ms=1234,
    )

    time = parsed(client.get(f"/badge/{project.badge_key}/response-time.svg"))
    certificate = parsed(client.get(f"/badge/{project.badge_key}/certificate.svg"))

    assert time.get("aria-label") == "response time: 123 ms"
    assert certificate.get("aria-label") == "certificate: 40 days left"


def test_the_shields_endpoint_follows_its_schema(client, make_project):
    project = make_project(name="api")
    Project.objects.filter(pk=project.pk).update(state="up")

    response = client.get(f"/badge/{project.badge_key}/shields.json")

    assert json.loads(response.content) == {
        "schemaVersion": 1,
        "label": "status",
        "message": "up",
        "color": "brightgreen",
    }
    assert client.get("/badge/nope/shields.json").status_code == 404


def test_a_page_badge_gives_the_pages_state(client):
    build_page(projects=4, sections=2, days=2)

    response = client.get("/status/acme/badge.svg")

    assert parsed(response).get("aria-label") == "status: partial outage"


def test_a_private_pages_badge_sends_a_visitor_to_sign_in(client):
    build_page(projects=2, sections=1, days=2)
    StatusPage.objects.update(visibility="private")

    response = client.get("/status/acme/badge.svg")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_regenerated_key_retires_the_old_url(client, make_project):
    project = make_project(name="api")
    old = project.badge_key
    Project.objects.filter(pk=project.pk).update(badge_key="a-new-key")

    assert client.get(f"/badge/{old}/status.svg").status_code == 404


def test_text_in_a_badge_is_escaped_and_sized():
    svg = badge("a<b", "x&y", "red")

    root = ET.fromstring(svg)
    assert root.get("aria-label") == "a<b: x&y"
    assert text_width("mmm") > text_width("iii")


@pytest.fixture(autouse=True)
def empty_cache():
    from django.core.cache import cache

    cache.clear()
