"""The admin's project form shows the section of the kind the URL
chooses, in headless Chromium: typing icmp:// shows the ping section and
hides HTTP's, DNS's and UDP's; an unknown scheme shows every section."""

from __future__ import annotations

import pytest

from tests.support.browser import CHROMIUM, MISSING, chromium_context

PASSWORD = "kinds-test-password"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def page(transactional_db, django_user_model, tmp_path, live_server, settings):
    settings.SITE_URL = ""
    django_user_model.objects.create_superuser("kinds", password=PASSWORD)
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_login", "kinds")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")
        page.goto(f"{live_server.url}/admin/projects/project/add/")
        yield page


def shown(page) -> list[str]:
    return page.eval_on_selector_all(
        "fieldset.kind-section",
        "sections => sections.filter(s => !s.hidden)"
        ".map(s => s.querySelector('h2').textContent.trim())",
    )


def test_the_urls_scheme_chooses_the_section_shown(page):
    page.fill("#id_url", "icmp://127.0.0.1")
    assert shown(page) == ["Ping (icmp://)"]
    page.fill("#id_url", "dns://127.0.0.1/example.com?type=MX")
    assert shown(page) == ["DNS (dns://)"]
    page.fill("#id_url", "https://example.com/")
    assert shown(page) == [
        "HTTP(S): what counts as up",
        "HTTP(S) request (http://, https://)",
    ]
    page.fill("#id_url", "gopher://example.com/")
    assert len(shown(page)) == 5
