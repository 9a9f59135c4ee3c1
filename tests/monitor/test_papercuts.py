"""Small things a first hour trips on: the favicon answers (no 404 and
warning per page view), and static files stay out of the access log."""

from __future__ import annotations

import logging

import pytest

from django.contrib.staticfiles import finders

from monitor.access_log import not_a_static_file


def access(path: str, status: int) -> logging.LogRecord:
    return logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", path, "1.1", status),
        None,
    )


@pytest.mark.parametrize(
    ("path", "status", "logged"),
    [
        ("/static/css/monitor.css", 200, False),
        ("/static/admin/js/core.js", 304, False),
        ("/favicon.ico", 301, False),
        ("/static/missing.css", 404, True),
        ("/", 200, True),
        ("/admin/", 302, True),
    ],
)
def test_static_files_stay_out_of_the_access_log(path, status, logged):
    assert not_a_static_file(access(path, status)) is logged


def test_the_favicon_is_found(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("favicon.svg")
    assert finders.find("favicon.svg") is not None


def test_every_page_names_its_icon(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in html
    html = admin_client.get("/").content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in html


def test_the_sign_in_page_shows_no_links_that_need_a_login(client, db):
    html = client.get("/accounts/login/").content.decode()

    for path in ("/incidents/", "/poller/", "/admin/"):
        assert f'href="{path}"' not in html
    assert html.lower().count("forgot") == 1  # one reset link, not two
