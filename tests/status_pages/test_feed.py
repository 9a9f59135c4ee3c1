"""The Atom feed of a status page carries its incidents and updates."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from django.core.cache import cache

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


def test_the_feed_passes_feedparser_and_has_rfc_4287s_required_elements(
    client, settings
):
    import feedparser

    settings.SITE_URL = "https://monitor.example.com"
    build_page(projects=3, sections=1, days=2)
    body = client.get("/status/acme/feed.atom").content

    parsed = feedparser.parse(body)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    feed = ET.fromstring(body)
    # RFC 4287 4.1.1: id, title, updated; an author, on the feed or on
    # every entry.
    for name in ("id", "title", "updated"):
        assert feed.find(f"{ATOM}{name}") is not None, name
    assert feed.find(f"{ATOM}author/{ATOM}name").text == "Acme status"
    ids = [feed.find(f"{ATOM}id").text]
    for entry in feed.findall(f"{ATOM}entry"):
        # 4.1.2: id, title, updated; an alternate link, as it has no content.
        for name in ("id", "title", "updated"):
            assert entry.find(f"{ATOM}{name}") is not None, name
        assert entry.find(f"{ATOM}link[@rel='alternate']") is not None
        ids.append(entry.find(f"{ATOM}id").text)
    assert len(ids) == len(set(ids)) == 4
    for iri in ids:  # 4.2.6: an IRI, absolute, the same under any host name
        assert iri.startswith("https://monitor.example.com/status/acme/"), iri


def test_entry_ids_do_not_depend_on_the_host_the_feed_is_read_under(client, settings):
    settings.ALLOWED_HOSTS = ["status.acme.test", "testserver"]
    build_page(projects=3, sections=1, days=2)
    StatusPage.objects.update(custom_domain="status.acme.test")
    cache.clear()  # the map of custom domains

    def ids(**host) -> list[str]:
        body = client.get(
            "/feed.atom" if host else "/status/acme/feed.atom", **host
        ).content
        return [e.text for e in ET.fromstring(body).iter(f"{ATOM}id")]

    assert ids() == ids(HTTP_HOST="status.acme.test")
