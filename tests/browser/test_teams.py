"""A viewer of team A in a real browser (headless Chromium through
Playwright, as in test_browser_dashboard.py): only A's project, B's is
not found by URL, and no edit controls anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from projects.models import Role
from tests.support.browser import CHROMIUM, MISSING, chromium_context
from tests.support.teams import make_team, member

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser-test-password"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def teams(transactional_db):
    """The ORM is done before Playwright starts: its event loop makes
    Django refuse ORM calls."""
    a, b = make_team("alpha"), make_team("bravo")
    viewer = member(a.team, Role.VIEWER, "vera")
    viewer.set_password(PASSWORD)
    viewer.save()
    return a, b


@pytest.fixture
def page(teams, tmp_path, live_server):
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(f"{live_server.url}/")
        page.fill("#id_login", "vera")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        yield page


def test_a_viewer_sees_only_their_teams_project_and_cannot_edit(
    page, teams, live_server
):
    a, b = teams
    ARTIFACTS.mkdir(exist_ok=True)

    overview = page.content()
    page.screenshot(path=ARTIFACTS / "teams-viewer-overview.png", full_page=True)
    assert "alpha-site" in overview
    assert "bravo" not in overview
    assert page.locator("select[name=team]").count() == 0  # one team: no picker

    missing = page.goto(f"{live_server.url}/projects/{b.project.pk}/")
    assert missing.status == 404

    page.goto(f"{live_server.url}/admin/projects/project/{a.project.pk}/change/")
    page.screenshot(path=ARTIFACTS / "teams-viewer-admin.png", full_page=True)
    assert page.locator("input[name=_save]").count() == 0
    assert page.locator("input[name=name]").count() == 0
    page.goto(f"{live_server.url}/admin/projects/project/")
    assert page.locator("a.addlink").count() == 0
    assert "bravo" not in page.content()
