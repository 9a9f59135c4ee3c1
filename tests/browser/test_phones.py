"""On a 360 px wide phone no page is wider than the screen, and the
response-time chart shows its newest data (the right edge) first.

One Chromium for all the pages; rows are made before it starts."""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.models import Incident
from tests.support.browser import CHROMIUM, MISSING, chromium_browser
from tests.support.status_pages import build_page

PASSWORD = "phone-test-password"
WIDTH = 360

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls, settings):
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    now = timezone.now()
    project = make_project(
        name="payments gateway", url="https://payments.example.test/v1/health/deep"
    )
    add_polls(project, "u" * 30 + "ddd", end=now, error="expected 200, got 503")
    Incident.objects.create(
        project=project,
        started_at=now,
        confirmed_at=now,
        first_error="expected 200, got 503",
    )
    heartbeat = make_project(name="nightly backup", kind="heartbeat", url="")
    build_page(projects=3, sections=1, days=7, slug="acme")
    return [
        "/",
        f"{project.get_absolute_url()}?range=24h",
        heartbeat.get_absolute_url(),
        "/incidents/",
        "/poller/",
        "/status/acme/",
        "/status/acme/subscribe/",
    ]


def test_no_page_is_wider_than_a_phone(seeded, live_server):
    too_wide = {}
    with chromium_browser() as browser:
        context = browser.new_context(viewport={"width": WIDTH, "height": 780})
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        too_wide["/accounts/login/"] = page.evaluate(
            "document.documentElement.scrollWidth"
        )
        page.fill("#id_login", "watcher")
        page.fill("#id_password", PASSWORD)
        page.click("[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        for path in seeded:
            page.goto(f"{live_server.url}{path}")
            too_wide[path] = page.evaluate("document.documentElement.scrollWidth")
        page.goto(f"{live_server.url}{seeded[1]}")
        chart = page.locator("figure.chart").first
        # The svg's right edge, its newest data, is inside the visible box.
        scrolled = chart.evaluate(
            "e => e.querySelector('svg').getBoundingClientRect().right"
            " <= e.getBoundingClientRect().right + 1"
        )
        scrollable = chart.evaluate("e => e.scrollWidth > e.clientWidth")
        context.close()

    assert {path: w for path, w in too_wide.items() if w > WIDTH} == {}
    assert scrollable  # the test would pass on a chart that fits, so it must not
    assert scrolled, "the chart opens scrolled away from its newest data"
