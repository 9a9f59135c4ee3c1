"""The API's docs page in a real browser, with every request that leaves
127.0.0.1 blocked and recorded: Swagger UI and the schema come from this
site (drf-spectacular-sidecar), nothing from the internet."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.browser import CHROMIUM, MISSING, chromium_browser

SCREENSHOT = Path(
    os.environ.get(
        "API_DOCS_SCREENSHOT",
        Path(__file__).resolve().parents[2] / "test-artifacts" / "api-docs.png",
    )
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


def test_the_docs_page_loads_everything_from_this_site(live_server, transactional_db):
    outside, local = [], []

    def only_local(route) -> None:
        host = urlsplit(route.request.url).hostname
        if host in ("localhost", "127.0.0.1"):
            local.append(route.request.url)
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.route("**/*", only_local)
        page.goto(f"{live_server.url}/api/v1/docs/")
        page.wait_for_selector("text=/api/v1/projects/", timeout=20_000)
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=False)
        title = page.locator(".info .title").inner_text()

    assert outside == []
    assert "Uptime monitor API" in title
    assert any(url.endswith("/api/v1/schema/") for url in local)
    assert any("swagger-ui" in url for url in local)
