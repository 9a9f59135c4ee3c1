"""The pages that keep themselves current do it with static/js/live.js,
never <meta refresh> (which threw away what someone was typing, and is a
WCAG 2.2.1 failure): a same-origin script, a region to swap, and a plain
refresh link for a browser without JavaScript. tests/browser/
test_live_pages.py drives the script itself."""

from __future__ import annotations

import re

import pytest

from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

LIVE_PAGES = ["dashboard:overview", "incidents:list", "polling:poller"]


def pages(make_project) -> list[str]:
    project = make_project()
    return [reverse(name) for name in LIVE_PAGES] + [project.get_absolute_url()]


def test_no_live_page_reloads_itself(admin_client, make_project, settings):
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    for url in pages(make_project):
        html = admin_client.get(url).content.decode()
        assert 'http-equiv="refresh"' not in html, url
        script = re.search(r'<script src="([^"]+)" defer></script>', html)
        assert script is not None, url
        assert script[1] == f"{settings.STATIC_URL}js/live.js"
        assert '<div id="live" data-live>' in html, url
        assert f'<a href="{url}">Refresh</a>' in html, url
        assert 'aria-live="polite"' in html, url


def test_the_refresh_link_keeps_the_query(admin_client, make_project):
    make_project(name="alpha")
    url = reverse("dashboard:overview") + "?q=alpha"
    html = admin_client.get(url).content.decode()
    assert '<a href="/?q=alpha">Refresh</a>' in html


def test_the_script_is_a_static_file_with_no_inline_code(admin_client, make_project):
    html = admin_client.get(reverse("dashboard:overview")).content.decode()
    assert "<script>" not in html
    assert re.search(r"<script(?![^>]*\bsrc=)", html) is None
    source = settings.BASE_DIR / "static" / "js" / "live.js"
    assert "setInterval" in source.read_text()
