"""The Atom feed of a status page carries its incidents and updates."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from projects.models import StatusPage, StatusUpdate
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


def entries(client, url="/status/acme/feed.atom") -> list[ET.Element]:
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    return ET.fromstring(response.content).findall(f"{ATOM}entry")


def test_the_feed_has_the_incident_and_each_update(client):
    built = build_page(projects=3, sections=1, days=2)

    found = entries(client)

    titles = [e.find(f"{ATOM}title").text for e in found]
    name = built.down.name
    assert titles == [
        f"Identified: {name} is down",
        f"Investigating: {name} is down",
        f"Incident: {name} is down",
    ]
    summary = found[1].find(f"{ATOM}summary").text
    assert "<strong>errors</strong>" in summary


def test_an_update_is_in_the_feed_at_once_and_its_html_is_inert(client):
    built = build_page(projects=3, sections=1, days=2)
    StatusUpdate.objects.create(
        incident=built.incident, status="monitoring", message="<script>x</script>"
    )

    newest = entries(client)[0]

    assert newest.find(f"{ATOM}title").text.startswith("Monitoring:")
    assert "<script>" not in newest.find(f"{ATOM}summary").text


def test_a_private_pages_feed_needs_a_login(client, admin_client):
    build_page(projects=2, sections=1, days=2)
    StatusPage.objects.update(visibility="private")

    assert client.get("/status/acme/feed.atom").status_code == 302
    assert admin_client.get("/status/acme/feed.atom").status_code == 200
