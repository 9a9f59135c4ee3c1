"""axe-core finds no critical or serious violation on the pages a newcomer
meets, in the light and the dark colour scheme: the sign-in page, the
dashboard, a project's page, a heartbeat project's page, the incidents
page, the poller page, the "API key created" page, a status page and its
subscribe page. Each has an <h1>.

axe-core comes bundled in axe-playwright-python (nothing is downloaded);
Debian's Chromium runs it, one browser for the module. Rows are made
before the browser starts, except through the live server.
"""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.models import Incident, Project
from tests.support.browser import CHROMIUM, MISSING, chromium_browser
from tests.support.status_pages import build_page

PASSWORD = "axe-test-password"
SERIOUS = {"critical", "serious"}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls, settings):
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    now = timezone.now()
    project = make_project(name="payments")
    add_polls(project, "u" * 30 + "ddd", end=now)
    Incident.objects.create(
        project=project, started_at=now, confirmed_at=now, first_error="expected 200"
    )
    heartbeat = make_project(name="backup", kind="heartbeat", url="")
    build_page(projects=3, sections=1, days=7, slug="acme")
    return {
        "project": project.get_absolute_url(),
        "heartbeat": Project.objects.get(pk=heartbeat.pk).get_absolute_url(),
    }


def violations(page) -> list[str]:
    """axe-core's critical and serious findings, and a missing <h1>."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    heading = [] if page.locator("h1").count() else ["no <h1> on the page"]
    return heading + [
        f"{v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])} nodes, e.g. "
        f"{v['nodes'][0]['target']})"
        for v in results.response["violations"]
        if v["impact"] in SERIOUS
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_critical_or_serious_violation(seeded, live_server, scheme):
    found = {}
    with chromium_browser() as browser:
        context = browser.new_context(
            color_scheme=scheme, viewport={"width": 1280, "height": 900}
        )
        page = context.new_page()

        def check(path: str) -> None:
            page.goto(f"{live_server.url}{path}")
            found[path] = violations(page)

        for path in ("/accounts/login/", "/status/acme/", "/status/acme/subscribe/"):
            check(path)
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_login", "watcher")
        page.fill("#id_password", PASSWORD)
        page.click("[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        for path in (
            "/",
            seeded["project"],
            seeded["heartbeat"],
            "/incidents/",
            "/poller/",
        ):
            check(path)
        page.goto(f"{live_server.url}/admin/projects/apikey/add/")
        page.fill("#id_name", f"ci-{scheme}")
        page.click("[name=_save]")
        page.wait_for_selector("input.api-key")
        found["API key created"] = violations(page)
        context.close()

    report = [f"{path}: {line}" for path, lines in found.items() for line in lines]
    assert not report, "\n".join(report)
