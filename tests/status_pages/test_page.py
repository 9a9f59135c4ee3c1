"""The status page: what it shows, safely, in a fixed number of queries,
fresh on the next request, and 304 to a conditional request."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from projects.models import Project, StatusPage, StatusUpdate
from projects.status_pages import version
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    from django.core.cache import cache

    cache.clear()


def test_the_page_shows_sections_states_uptime_and_the_incident_timeline(client):
    built = build_page()

    response = client.get("/status/acme/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "Partial outage" in html
    assert html.count('class="project"') == 20
    for name in ("Section 1", "Section 2", "Section 3"):
        assert name in html
    assert f"{built.down.name} is down" in html
    assert "<strong>errors</strong>" in html
    assert html.index("A full disk") < html.index("looking into")  # newest first
    assert html.count('role="img"') == 20 * 90
    day = (timezone.now().date() - timedelta(days=1)).isoformat()
    assert re.search(rf'aria-label="{day}: [0-9.]+% up, [0-9a-z ]+ down"', html)


def test_a_day_cell_gives_the_days_uptime_and_downtime(client):
    built = build_page(projects=1, sections=1, days=3)
    from projects.models import DailyRollup

    day = timezone.now().date() - timedelta(days=1)
    DailyRollup.objects.filter(day=day).update(polls=1440, failures=1)

    html = client.get("/status/acme/").content.decode()

    assert f'aria-label="{day.isoformat()}: 99.93% up, 1 min down"' in html
    assert built.projects[0].name in html


def test_a_bars_uptime_counts_the_failures_and_maintenance_of_compacted_days(client):
    # The daily summary sums only polls; failures and maintenance come from
    # the imperfect days, read one by one.
    build_page(projects=1, sections=1, days=4, with_incident=False)
    from projects.models import DailyRollup

    day = timezone.now().date() - timedelta(days=1)
    DailyRollup.objects.filter(day=day).update(
        polls=1440, failures=30, maintenance_polls=100, maintenance_failures=10
    )

    html = client.get("/status/acme/").content.decode()

    # 3 days of 1,440 polls and today's 60; 100 in maintenance, of which 10
    # failed: 20 counted failures of 4,280 counted polls.
    assert "99.53% uptime" in html


def test_a_cells_label_is_written_once_and_a_good_day_needs_no_class(client):
    build_page(projects=1, sections=1, days=3, with_incident=False)
    day = (timezone.now().date() - timedelta(days=1)).isoformat()

    html = client.get("/status/acme/").content.decode()

    label = f"{day}: 100% up, 0 s down"
    assert html.count(label) == 1
    assert f'<i role="img" aria-label="{label}"></i>' in html


def test_a_bar_costs_at_most_64_bytes_a_day(client):
    # The page's weight is its cells (45,000 on a 90-day page of 500
    # projects): building, gzipping and sending it all scale with this.
    build_page(projects=2, sections=1, days=90, with_incident=False)

    html = client.get("/status/acme/").content.decode()

    bars = re.findall(r'<div class="bar"[^>]*>(.*?)</div>', html)
    assert len(bars) == 2
    assert all(bar.count("<i ") == 90 for bar in bars)
    assert max(len(bar) for bar in bars) <= 64 * 90


def test_markdown_in_an_update_cannot_run_script(client):
    built = build_page(projects=2, sections=1, days=2)
    StatusUpdate.objects.create(
        incident=built.incident,
        message="<script>alert(1)</script> [x](javascript:alert(2)) "
        "<img src=x onerror=alert(3)>",
    )

    html = client.get("/status/acme/").content.decode()

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html
    assert "<img src=x" not in html


@pytest.mark.parametrize("count", [5, 50])
def test_the_page_costs_the_same_queries_for_5_or_50_projects(client, count):
    build_page(projects=count, sections=3, days=30)

    with CaptureQueriesContext(connection) as queries:
        assert client.get("/status/acme/").status_code == 200

    assert len(queries) == 12


def test_an_update_shows_on_the_next_request(client):
    built = build_page(projects=3, sections=1, days=2)
    assert "Rolled back" not in client.get("/status/acme/").content.decode()

    StatusUpdate.objects.create(
        incident=built.incident, status="monitoring", message="Rolled back."
    )

    assert "Rolled back" in client.get("/status/acme/").content.decode()


def test_a_state_change_by_the_writer_shows_on_the_next_request(client):
    built = build_page(projects=3, sections=1, days=2)
    assert "Partial outage" in client.get("/status/acme/").content.decode()

    # The writer changes states with bulk SQL: no signal is sent.
    Project.objects.filter(pk=built.down.pk).update(state=Project.State.UP)

    assert "All systems operational" in client.get("/status/acme/").content.decode()


def test_a_conditional_request_gets_304_until_something_changes(client):
    built = build_page(projects=3, sections=1, days=2)
    first = client.get("/status/acme/")
    etag = first["ETag"]
    assert first["Last-Modified"]

    again = client.get("/status/acme/", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""

    StatusUpdate.objects.create(incident=built.incident, message="More news.")
    changed = client.get("/status/acme/", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag


def test_a_cached_page_costs_one_query_for_its_slug_and_one_for_its_version(client):
    build_page(projects=5, sections=1, days=2)
    client.get("/status/acme/")

    with CaptureQueriesContext(connection) as queries:
        client.get("/status/acme/")

    assert len(queries) == 2


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared only on PostgreSQL"
)
def test_the_prepared_version_is_prepared_once_and_answers_as_the_query():
    build_page(projects=3, sections=1, days=2)
    page = StatusPage.objects.get()
    now = timezone.now()

    prepared = [version.page_version(page, now) for _ in range(3)]

    with connection.cursor() as cursor:
        cursor.execute(
            version.QUERY.format(**version._tables()),
            {"page": page.pk, "since": now - timedelta(days=page.show_uptime_days)},
        )
        assert prepared == [version.digest(cursor.fetchone())] * 3
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE %s",
            [version.PREPARED_PREFIX + "%"],
        )
        assert cursor.fetchone() == (1,)


def test_a_private_page_needs_a_login(client, admin_client):
    build_page(projects=2, sections=1, days=2)
    StatusPage.objects.update(visibility=StatusPage.Visibility.PRIVATE)

    assert client.get("/status/acme/").status_code == 302
    response = admin_client.get("/status/acme/")
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]


def test_an_unknown_page_is_404(client):
    assert client.get("/status/nope/").status_code == 404


def test_incidents_can_wait_for_their_first_update(client):
    built = build_page(projects=2, sections=1, days=2)
    StatusUpdate.objects.all().delete()
    StatusPage.objects.update(incidents_need_update=True)

    assert "is down" not in client.get("/status/acme/").content.decode()

    StatusUpdate.objects.create(incident=built.incident, message="Looking.")
    assert "is down" in client.get("/status/acme/").content.decode()


def test_a_custom_domain_serves_its_page_at_the_root(client, settings):
    settings.ALLOWED_HOSTS = ["status.example.com", "testserver"]
    build_page(projects=3, sections=1, days=2)
    StatusPage.objects.update(custom_domain="status.example.com")

    response = client.get("/", HTTP_HOST="status.example.com")

    assert response.status_code == 200
    assert "Acme status" in response.content.decode()
    assert 'href="/feed.atom"' in response.content.decode()
    badge = client.get("/badge.svg", HTTP_HOST="status.example.com")
    assert badge["Content-Type"].startswith("image/svg+xml")


def test_other_hosts_still_get_the_dashboard_at_the_root(client, settings):
    settings.ALLOWED_HOSTS = ["status.example.com", "monitor.example.com"]
    build_page(projects=3, sections=1, days=2)
    StatusPage.objects.update(custom_domain="status.example.com")

    response = client.get("/", HTTP_HOST="monitor.example.com")

    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_a_section_takes_the_projects_of_its_tag(client):
    from projects.models import StatusPageSection, Tag

    built = build_page(projects=2, sections=1, days=2)
    tag = Tag.objects.create(name="edge")
    tagged = Project.objects.create(name="cdn edge", url="http://127.0.0.1:9/")
    tagged.tags.add(tag)
    StatusPageSection.objects.create(page=built.page, name="Edge", tag=tag)

    html = client.get("/status/acme/").content.decode()

    assert "cdn edge" in html
    assert "Edge" in html


def test_a_day_without_polls_between_others_has_no_data(client):
    from projects.models import DailyRollup

    build_page(projects=1, sections=1, days=5)
    gap = timezone.now().date() - timedelta(days=2)
    DailyRollup.objects.filter(day=gap).delete()

    html = client.get("/status/acme/").content.decode()

    assert f'aria-label="{gap.isoformat()}: no data"' in html
    before = (gap - timedelta(days=1)).isoformat()
    assert f'aria-label="{before}: 100% up, 0 s down"' in html


def test_the_page_is_sent_gzipped_to_browsers_that_ask(client):
    import gzip

    build_page(projects=3, sections=1, days=30)
    plain = client.get("/status/acme/")

    packed = client.get("/status/acme/", HTTP_ACCEPT_ENCODING="gzip, br")

    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert len(packed.content) * 5 < len(plain.content)
    assert "Accept-Encoding" in packed["Vary"]


def test_active_and_upcoming_maintenance_show_and_set_the_state(client):
    from projects.models import MaintenanceWindow

    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    Project.objects.update(state=Project.State.UP)
    now = timezone.now()
    active = MaintenanceWindow.objects.create(
        name="Database upgrade",
        starts_at=now - timedelta(minutes=5),
        ends_at=now + timedelta(hours=1),
    )
    active.projects.set(built.projects)
    MaintenanceWindow.objects.create(
        name="Network work",
        starts_at=now + timedelta(days=2),
        ends_at=now + timedelta(days=2, hours=1),
        all_projects=True,
    )

    html = client.get("/status/acme/").content.decode()

    assert "Under maintenance" in html
    assert "Database upgrade" in html
    assert "In progress" in html
    assert "Network work" in html
    assert "Scheduled" in html


def test_an_open_manual_incident_shows_with_its_title(client):
    from projects.models import Incident

    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    Project.objects.update(state=Project.State.UP)
    now = timezone.now()
    Incident.objects.create(
        project=built.projects[0],
        kind=Incident.Kind.MANUAL,
        title="Slow logins",
        started_at=now,
        confirmed_at=now,
    )

    html = client.get("/status/acme/").content.decode()

    assert "Slow logins" in html
    assert "Partial outage" in html
    assert "Degraded" in html


def test_a_projects_name_is_escaped(client):
    built = build_page(projects=1, sections=1, days=2, with_incident=False)
    Project.objects.filter(pk=built.projects[0].pk).update(name='<b>"api"</b>')

    html = client.get("/status/acme/").content.decode()

    assert "<b>" not in html
    assert "&lt;b&gt;&quot;api&quot;&lt;/b&gt;" in html


def test_each_projects_line_is_in_its_own_section(client):
    built = build_page(projects=6, sections=3, days=3, with_incident=False)

    html = client.get("/status/acme/").content.decode()

    sections = re.findall(r"<section class=\"section\".*?</section>", html, re.S)
    assert len(sections) == 3
    for n, section in enumerate(sections):
        assert f"Section {n + 1}</h2>" in section
        names = re.findall(r'<span class="name">([^<]*)</span>', section)
        assert names == [p.name for p in built.projects[n::3]]


def test_an_incident_of_a_project_added_after_the_page_read_its_projects_waits():
    from projects.status_pages.incidents import page_incidents

    built = build_page(projects=2, sections=1, days=2)
    known = Project.objects.exclude(pk=built.down.pk).values("id", "name")

    found = page_incidents(
        built.page,
        {row["id"]: row for row in known},
        timezone.now(),
        project_ids=Project.objects.values("id"),
    )

    assert found.open == []


def meta_descriptions(html: str) -> list[str]:
    from html.parser import HTMLParser

    found = []

    class Metas(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attributes = dict(attrs)
            if tag == "meta" and attributes.get("name") == "description":
                found.append(attributes.get("content"))

    Metas().feed(html)
    return found


def test_the_page_and_its_subscribe_form_carry_a_meta_description(client):
    build_page(projects=2, sections=1, days=2)
    StatusPage.objects.update(description='Our "shop" <and> API')

    for url in ("/status/acme/", "/status/acme/subscribe/"):
        html = client.get(url).content.decode()
        assert meta_descriptions(html) == ['Our "shop" <and> API'], url


def test_a_page_without_a_description_still_describes_itself(client):
    build_page(projects=2, sections=1, days=2)

    html = client.get("/status/acme/").content.decode()

    (description,) = meta_descriptions(html)
    assert "Acme status" in description


def test_a_flows_incident_is_named_after_its_project_not_its_failing_step(client):
    """A step's name ("step 2 'admin login'") says how the check works
    inside; the public page says what is down, as for any project."""
    built = build_page(projects=2, sections=1, days=2)
    Project.objects.filter(pk=built.down.pk).update(kind=Project.Kind.FLOW)
    built.incident.title = f"{built.down.name}: step 2 'admin login' failed"
    built.incident.save(update_fields=["title"])

    html = client.get("/status/acme/").content.decode()

    assert f"{built.down.name} is down" in html
    assert "admin login" not in html
