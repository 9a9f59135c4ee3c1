"""A heartbeat project has a page of its own: the full ping URL with
copy-paste curl lines for success and failure, the schedule and grace,
when the next ping is due, and the recent pings with their messages; no
response-time chart and no DNS/TLS legend."""

from __future__ import annotations

import shlex
import subprocess
from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.models import PollResult, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def now():
    return timezone.now()


@pytest.fixture
def heartbeat(make_project, now):
    project = make_project(
        name="nightly backup",
        kind="heartbeat",
        url="",
        interval=24,
        interval_unit="hours",
        grace_seconds=300,
    )
    project.ping_deadline = now + timedelta(hours=3)
    project.save()
    PollResult.objects.create(
        project=project,
        polled_at=now - timedelta(hours=21),
        status=Status.UP,
        error_message="backup done: 12 GB",
    )
    PollResult.objects.create(
        project=project,
        polled_at=now - timedelta(hours=45),
        status=Status.DOWN,
        error_message="disk full",
    )
    return project


def page(admin_client, project, **query) -> str:
    response = admin_client.get(project.get_absolute_url(), query)
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_the_full_ping_url_and_curl_lines(admin_client, heartbeat):
    html = page(admin_client, heartbeat)
    ping = "http://testserver" + reverse("pings:ping", args=[heartbeat.ping_key])

    assert f'<code class="ping-url">{ping}</code>' in html
    assert f'<code class="curl-success">curl -fsS -m 10 --retry 5 {ping}</code>' in html
    assert (
        '<code class="curl-failure">curl -fsS -m 10 --retry 5 --data-raw '
        f"&quot;what went wrong&quot; {ping}/fail</code>"
    ) in html


def test_it_shows_the_schedule_the_grace_and_when_the_next_ping_is_due(
    admin_client, heartbeat
):
    html = page(admin_client, heartbeat)

    assert "<dt>Expected</dt><dd>every 24 h</dd>" in html
    assert "<dt>Grace</dt><dd>300 s</dd>" in html
    due = heartbeat.ping_deadline.strftime("%Y-%m-%d %H:%M:%S")
    assert due in html
    assert "(in 2\xa0hours, 59\xa0minutes)" in html or "(in 3\xa0hours)" in html


def test_a_late_ping_says_by_how_much(admin_client, heartbeat, now):
    heartbeat.ping_deadline = now - timedelta(minutes=10)
    heartbeat.save()
    assert "late by 10\xa0minutes" in page(admin_client, heartbeat)


def test_recent_pings_come_with_their_messages(admin_client, heartbeat):
    day = page(admin_client, heartbeat)
    week = page(admin_client, heartbeat, range="7d")

    assert '<td class="message">backup done: 12 GB</td>' in day
    assert "disk full" not in day  # older than the range
    assert '<td class="message">disk full</td>' in week


def test_there_is_no_response_time_chart_or_phase_legend(admin_client, heartbeat):
    html = page(admin_client, heartbeat)

    assert "Response time" not in html
    assert "<svg" not in html
    for phase in ("DNS", "TLS", "first byte", "Phases"):
        assert phase not in html
    assert "Polls, last" not in html


def test_a_polled_project_keeps_its_chart(admin_client, make_project):
    html = page(admin_client, make_project())
    assert "Response time, last" in html
    assert "How to ping it" not in html


def test_the_success_line_really_pings(
    transactional_db, admin_client, heartbeat, live_server
):
    """The copied line works as printed: curl against the live server."""
    html = admin_client.get(heartbeat.get_absolute_url()).content.decode()
    line = html.split('<code class="curl-success">', 1)[1].split("</code>", 1)[0]
    command = shlex.split(line.replace("http://testserver", live_server.url))
    answer = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert answer.returncode == 0, answer.stderr
