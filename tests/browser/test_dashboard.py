"""The dashboard in a real browser: headless Chromium driven by Playwright.

Uses Debian's chromium package (.ci/run installs it), never a browser that
Playwright downloads. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from django.utils import timezone

from tests.support.browser import CHROMIUM, MISSING, chromium_context

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser-test-password"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls):
    """A user and one project in each state. The ORM must be done before
    Playwright starts: its event loop makes Django refuse ORM calls."""
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    now = timezone.now()
    add_polls(make_project(name="checkout-api"), "u" * 80, end=now)
    payments = make_project(name="payments", url="https://payments.example.test/health")
    add_polls(payments, "u" * 40 + "d" * 8 + "u" * 20 + "ddd", end=now)
    add_polls(
        make_project(name="legacy", enabled=False),
        "u" * 10,
        end=now - timedelta(days=2),
    )
    make_project(name="new-service")
    return payments


@pytest.fixture
def browser_context(seeded, tmp_path):
    viewport = {"width": 1280, "height": 900}
    with chromium_context(tmp_path / "profile", viewport=viewport) as context:
        yield context


@pytest.fixture
def page(browser_context, live_server):
    page = browser_context.new_page()
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    page.goto(f"{live_server.url}/")
    page.fill("#id_login", "watcher")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)


def test_the_overview_shows_every_project_in_its_state(page, live_server):
    rows = page.locator("table.projects tbody tr")

    assert rows.first.locator(".project-name a").inner_text() == "payments"
    for name, state in [
        ("payments", "Down"),
        ("checkout-api", "Up"),
        ("legacy", "Paused"),
        ("new-service", "Waiting"),
    ]:
        row = rows.filter(has_text=name)
        assert row.locator(".badge").inner_text().endswith(state)
    assert page.locator(".count-down .count-number").inner_text() == "1"
    assert rows.filter(has_text="payments").locator(".hb").count() == 50
    screenshot(page, "overview")
    assert all(url.startswith(live_server.url) for url in page.requests)


def test_colour_is_never_the_only_cue(page):
    down_bar = page.locator(".hb-down").first.bounding_box()
    up_bar = page.locator(".hb-up").first.bounding_box()

    assert down_bar["height"] > up_bar["height"]
    badge = page.locator(".badge-down").first
    assert (
        badge.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(196, 66, 10)"
    )


def test_a_project_page_has_its_chart(page, live_server, seeded):
    page.click("text=payments")
    page.wait_for_url(f"{live_server.url}{seeded.get_absolute_url()}")

    chart = page.locator("figure.chart > svg")
    assert chart.is_visible()
    assert chart.bounding_box()["width"] > 600
    assert page.locator("path.line-avg").get_attribute("d").startswith("M")
    assert page.locator("table.outages tbody tr").count() == 2
    assert "ongoing" in page.locator("table.outages").inner_text()
    screenshot(page, "project")

    page.click("nav.tabs >> text=1h")
    assert page.locator("#chart-heading").inner_text() == "Response time, last 1 hour"
    assert all(url.startswith(live_server.url) for url in page.requests)


def test_it_reads_well_on_a_phone(page, live_server):
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()

    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    screenshot(page, "overview-phone")


def rgb(css_colour: str) -> tuple[int, ...]:
    """(r, g, b) from a computed colour such as "rgb(15, 20, 25)"."""
    return tuple(int(part) for part in css_colour[4:-1].split(","))[:3]


def contrast(first: tuple[int, ...], second: tuple[int, ...]) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""

    def luminance(colour):
        channels = [c / 255 for c in colour]
        linear = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in channels
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def computed(page, selector: str, prop: str) -> tuple[int, ...]:
    return rgb(
        page.locator(selector).first.evaluate(f"e => getComputedStyle(e).{prop}")
    )


def test_every_page_follows_a_dark_colour_scheme(page, live_server, seeded):
    page.emulate_media(color_scheme="light")
    assert computed(page, "body", "backgroundColor") == (255, 255, 255)

    page.emulate_media(color_scheme="dark")
    for path in ["/", seeded.get_absolute_url(), "/incidents/", "/poller/"]:
        page.goto(f"{live_server.url}{path}")
        background = computed(page, "body", "backgroundColor")
        assert sum(background) < 3 * 40, path  # dark, not merely tinted
        assert contrast(computed(page, "body", "color"), background) >= 7, path

    # The heartbeat bars and the chart's line stay visible on the dark page
    # (3:1, WCAG's minimum for graphics), and the down badge stays legible.
    page.goto(f"{live_server.url}/")
    for bar in [".hb-up", ".hb-down"]:
        assert contrast(computed(page, bar, "backgroundColor"), background) >= 3
    badge_text = computed(page, ".badge-down", "color")
    assert contrast(badge_text, computed(page, ".badge-down", "backgroundColor")) >= 4.5
    page.goto(f"{live_server.url}{seeded.get_absolute_url()}")
    assert contrast(computed(page, "path.line-avg", "stroke"), background) >= 3
    screenshot(page, "project-dark")
