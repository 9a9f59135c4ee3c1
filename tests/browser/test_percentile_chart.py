"""The project chart's p50/p95/p99 lines and a status page's objectives
in a real browser (Debian's chromium, driven by Playwright): drawn,
named in the legend, nothing loaded from elsewhere. Screenshots land in
test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest

from django.utils import timezone

from projects.models import ServiceLevelObjective, StatusPage
from tests.support.browser import CHROMIUM, MISSING, chromium_context
from tests.support.status_pages import build_page

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser-test-password"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls):
    """A project with a day of polls, most fast and a slow tail that grows
    through the day; a status page showing an objective. The ORM is done
    before Playwright starts (its event loop makes Django refuse it)."""
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    project = make_project(name="checkout-api")
    times = [
        (900 + 20 * (i // 60)) if i % 20 == 0 else (120 + (i % 7) * 10)
        for i in range(24 * 60)
    ]
    add_polls(project, "u" * len(times), end=timezone.now(), response_time_ms=times)
    built = build_page(projects=3, sections=1, days=10, with_incident=False)
    StatusPage.objects.filter(pk=built.page.pk).update(show_objectives=True)
    ServiceLevelObjective.objects.create(
        name="Checkout availability",
        section=built.page.sections.get(),
        target_percent=99.9,
        window_days=7,
    )
    return project


@pytest.fixture
def browser_context(seeded, tmp_path):
    with chromium_context(
        tmp_path / "profile", viewport={"width": 1280, "height": 900}
    ) as context:
        yield context


def test_the_chart_draws_the_percentiles_with_a_legend(
    browser_context, live_server, seeded
):
    page = browser_context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_server.url}/")
    page.fill("#id_login", "watcher")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    page.goto(f"{live_server.url}{seeded.get_absolute_url()}?range=24h")

    for name in ("p50", "p95", "p99"):
        line = page.locator(f"figure.chart > svg path.line-{name}")
        assert line.get_attribute("d").startswith("M")
        assert line.bounding_box()["width"] > 300
    legend = page.locator("figure.chart figcaption").inner_text()
    assert "p95" in legend
    assert "per hour, from the rollups" in legend
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("figure.chart").screenshot(path=ARTIFACTS / "chart-percentiles.png")
    assert all(url.startswith(live_server.url) for url in requests)


def test_a_status_page_shows_its_objectives(browser_context, live_server):
    page = browser_context.new_page()

    page.goto(f"{live_server.url}/status/acme/")

    table = page.locator("table.objectives")
    assert table.is_visible()
    assert "Checkout availability" in table.inner_text()
    assert "99.9 % over 7 days" in table.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("section.section").first.screenshot(
        path=ARTIFACTS / "status-objectives.png"
    )
