"""Live pages in a real browser: static/js/live.js swaps the page's
regions every 30 s, but never while a field has focus or unsent text, can
be paused, says politely what changed, and leaves a refresh link when
JavaScript is off.

Playwright's clock stands in for the 30 s (no test waits for them); the
fetches and the server are real. One Chromium for the module: while it
runs, Playwright's event loop sits in the test's thread and Django would
refuse the ORM calls of the fixtures; they are safe (Playwright makes
none), so DJANGO_ALLOW_ASYNC_UNSAFE lets them through for the module.
"""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.models import Incident, Project
from tests.support.browser import CHROMIUM, MISSING, chromium_browser
from tests.support.waiting import wait_until

PASSWORD = "live-test-password"
ROUND = 31_000  # ms: one round of the script's 30 s

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture(scope="module")
def browser():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with chromium_browser() as browser:
            yield browser


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls):
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    now = timezone.now()
    alpha = make_project(name="alpha")
    add_polls(alpha, "u" * 10, end=now)
    payments = make_project(name="payments")
    add_polls(payments, "u" * 5 + "ddd", end=now)
    Incident.objects.create(project=payments, started_at=now, confirmed_at=now)
    return alpha


def open_page(browser, live_server, path: str, **options):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    page = context.new_page()
    page.fetches = []
    page.on(
        "request",
        lambda request: (
            request.resource_type == "fetch" and page.fetches.append(request.url)
        ),
    )
    if options.get("java_script_enabled", True):
        page.clock.install()
    page.goto(f"{live_server.url}/accounts/login/?next={path}")
    page.fill("#id_login", "watcher")
    page.fill("#id_password", PASSWORD)
    page.click("[type=submit]")
    page.wait_for_url(f"{live_server.url}{path}")
    return page


@pytest.fixture
def pages(browser, live_server, seeded):
    opened = []

    def open_(path: str, **options):
        page = open_page(browser, live_server, path, **options)
        opened.append(page)
        return page

    yield open_
    for page in opened:
        page.context.close()


def test_the_overview_updates_in_place_and_says_what_changed(pages, seeded):
    page = pages("/")
    page.evaluate("window.__sameDocument = true")
    assert page.locator(".count-down .count-number").inner_text() == "1"

    Project.objects.filter(pk=seeded.pk).update(
        state=Project.State.DOWN, last_status="down"
    )
    page.clock.run_for(ROUND)

    wait_until(lambda: page.locator(".count-down .count-number").inner_text() == "2")
    assert page.evaluate("window.__sameDocument") is True  # no reload
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    assert "2 down" in page.locator(".live-status").inner_text()
    assert page.locator(".live-status").get_attribute("aria-live") == "polite"
    assert page.fetches == [page.url]


def test_a_half_typed_status_update_survives_the_rounds(pages):
    page = pages("/incidents/")
    page.click("details.status-update-form summary")
    page.fill("details.status-update-form textarea", "We are looking into it")
    page.locator("h1").click()  # the text is unsent, the field not in focus

    page.clock.run_for(3 * ROUND)

    assert page.fetches == []
    textarea = page.locator("details.status-update-form textarea")
    assert textarea.input_value() == "We are looking into it"
    assert page.locator("details.status-update-form").get_attribute("open") == ""

    textarea.fill("")
    textarea.focus()  # nothing typed, but the cursor is there
    page.clock.run_for(ROUND)
    assert page.fetches == []

    page.locator("h1").click()
    page.clock.run_for(ROUND)
    wait_until(
        lambda: page.evaluate(
            "document.querySelector('.live-stamp').textContent.startsWith('Updated')"
        )
    )
    assert len(page.fetches) == 1
    # The region was swapped, and the open form stayed open.
    assert page.locator("details.status-update-form").get_attribute("open") == ""


def test_pause_updates_stops_the_rounds_until_resumed(pages):
    page = pages("/")
    page.get_by_role("button", name="Pause updates").click()
    assert page.locator(".live-pause").get_attribute("aria-pressed") == "true"
    page.locator(".live-stamp").click()  # the button is no field

    page.clock.run_for(2 * ROUND)
    assert page.fetches == []

    page.get_by_role("button", name="Resume updates").click()
    page.clock.run_for(ROUND)
    wait_until(lambda: len(page.fetches) == 1)


def test_without_javascript_the_page_has_a_refresh_link(pages, live_server):
    page = pages("/", java_script_enabled=False)
    link = page.get_by_role("link", name="Refresh")
    assert link.get_attribute("href") == "/"
    assert page.get_by_role("button", name="Pause updates").count() == 0
    link.click()
    page.wait_for_url(f"{live_server.url}/")
