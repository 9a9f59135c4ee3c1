"""The Content-Security-Policy breaks no page: the admin, the dashboard
and a project's page render in headless Chromium with no violation.

Chromium reports each blocked script, style or image on the console as
"Refused to ..." and fires a securitypolicyviolation event; both are
collected for every page visited.
"""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.models import Incident
from projects.notifications.links import acknowledge_url
from tests.support.browser import CHROMIUM, MISSING, chromium_context

PASSWORD = "csp-test-password"
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", e => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def seeded(transactional_db, django_user_model, make_project, add_polls, settings):
    settings.SITE_URL = ""
    django_user_model.objects.create_superuser("watcher", password=PASSWORD)
    now = timezone.now()
    project = make_project(name="payments", url="https://payments.example.test/")
    add_polls(project, "u" * 40 + "ddd", end=now)
    incident = Incident.objects.create(
        project=project, started_at=now, confirmed_at=now
    )
    return project, acknowledge_url(incident.pk)


@pytest.fixture
def page(seeded, tmp_path, live_server):
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.add_init_script(LISTEN)
        page.refusals = []
        page.on(
            "console",
            lambda message: (
                "Refused to" in message.text and page.refusals.append(message.text)
            ),
        )
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_login", "watcher")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")
        yield page


def test_no_page_breaks_the_policy(page, live_server, seeded):
    project, acknowledge_link = seeded
    paths = [
        "/admin/",
        "/admin/projects/project/",
        f"/admin/projects/project/{project.pk}/change/",
        "/admin/projects/project/add/",
        "/admin/projects/pollresultrow/",
        "/admin/projects/notificationchannel/add/",
        "/admin/projects/maintenancewindow/add/",
        "/admin/django_q/schedule/add/",
        "/admin/auth/user/",
        "/",
        f"/projects/{project.pk}/",
        "/incidents/",
        "/poller/",
        acknowledge_link,
    ]
    violations = {}
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("load")
        found = page.evaluate("window.__violations") + page.refusals
        if found:
            violations[path] = found
        page.refusals = []

    assert violations == {}, "\n".join(
        f"{k}: {sorted(set(v))}" for k, v in violations.items()
    )


def test_an_inline_script_would_be_refused(page, live_server):
    """The listener works: a script the policy forbids is reported."""
    page.goto(f"{live_server.url}/")
    page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.ran = true";
                   document.body.appendChild(s); }"""
    )
    page.wait_for_timeout(200)

    assert page.evaluate("window.ran === undefined") is True
    assert page.evaluate("window.__violations.length") >= 1
