"""The status page in a real browser, without logging in: light and dark
screenshots, no request beyond this site, and a badge in a plain HTML
page. Uses Debian's chromium, driven by Playwright."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, MISSING, chromium_browser
from tests.support.status_pages import build_page

SCREENS = Path(os.environ.get("STATUS_SCREENS", "/work/screens"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def built(transactional_db):
    # The ORM must be done before Playwright starts: its event loop makes
    # Django refuse ORM calls.
    return build_page(projects=20, sections=3, days=90)


@pytest.fixture
def browser(built):
    with chromium_browser() as instance:
        yield instance


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_renders_without_a_login_in_light_and_dark(
    browser, built, live_server, scheme
):
    context = browser.new_context(
        color_scheme=scheme, viewport={"width": 1000, "height": 900}
    )
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))

    page.goto(f"{live_server.url}/status/acme/")

    assert page.locator(".overall").inner_text().strip().endswith("Partial outage")
    assert page.locator(".project").count() == 20
    assert page.locator(".timeline li").count() == 2
    # Today's cell: screen readers get its label as the image's name, and
    # hovering shows the same text as its tooltip.
    cell = page.locator(".bar i").last
    label = cell.get_attribute("aria-label")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d: 100% up, 0 s down", label)
    assert page.get_by_role("img", name=label, exact=True).count() == 20
    cell.hover()
    tooltip = cell.evaluate("cell => getComputedStyle(cell, '::after').content")
    assert tooltip == f'"{label}"'
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(15, 18, 22)") is (scheme == "dark")
    assert all(
        url.startswith(live_server.url) or url.startswith("data:") for url in requests
    )
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"status-{scheme}.png"), full_page=True)
    context.close()


@pytest.fixture
def year_page(built):
    from projects.models import StatusPage

    StatusPage.objects.update(show_uptime_days=365)
    return built


def test_a_years_page_fits_a_phone(year_page, browser, live_server):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()

    page.goto(f"{live_server.url}/status/acme/")

    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360
    shown = page.locator(".project").first.locator(".bar i:visible").count()
    assert shown == 90
    assert page.locator(".axis .phone").first.is_visible()
    page.screenshot(path=str(SCREENS / "status-phone.png"))
    context.close()


def test_a_badge_in_a_plain_html_page_renders(browser, built, live_server, tmp_path):
    key = built.down.badge_key
    html = tmp_path / "embed.html"
    html.write_text(
        f'<!doctype html><img id="b" alt="status" '
        f'src="{live_server.url}/badge/{key}/status.svg">'
    )
    page = browser.new_page()

    page.goto(html.as_uri())
    page.wait_for_function("document.getElementById('b').complete")

    size = page.evaluate(
        "[document.getElementById('b').naturalWidth, "
        "document.getElementById('b').naturalHeight]"
    )
    assert size[0] > 50
    assert size[1] == 20
    page.close()
