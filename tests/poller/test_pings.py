"""The ping endpoint: /ping/<key> and /ping/<key>/fail, through Django's
URL conf (the view). The writer stores pings on a connection of its own,
so these tests commit what they set up (transaction=True)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import timedelta

import pytest

from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from projects.models import PollResult, Project
from tests.support.processes import ROOT, process_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_rate_counts():
    cache.clear()


@pytest.fixture
def heartbeat(make_project):
    return make_project(
        kind="heartbeat", url="", interval=1, interval_unit="hours", grace_seconds=300
    )


def ping_url(project: Project, *, fail: bool = False) -> str:
    return reverse("pings:fail" if fail else "pings:ping", args=[project.ping_key])


def test_a_heartbeat_project_gets_a_ping_key_and_a_first_deadline(heartbeat):
    assert isinstance(heartbeat.ping_key, uuid.UUID)
    expected = timezone.now() + timedelta(minutes=65)
    assert abs(heartbeat.ping_deadline - expected) < timedelta(seconds=5)


def test_a_ping_is_stored_as_an_up_result_and_sets_the_deadline(client, heartbeat):
    before = timezone.now()

    response = client.get(ping_url(heartbeat))

    assert (response.status_code, response.content) == (200, b"OK\n")
    result = PollResult.objects.get(project=heartbeat)
    assert (result.status, result.error_message, result.status_code) == ("up", "", None)
    heartbeat.refresh_from_db()
    assert heartbeat.last_status == "up"
    assert heartbeat.ping_deadline >= before + timedelta(minutes=65)


def test_a_posted_body_is_kept_as_the_message(client, heartbeat):
    client.post(
        ping_url(heartbeat), data=b"backup done\n2 GB", content_type="text/plain"
    )

    assert PollResult.objects.get().error_message == "backup done\n2 GB"


def test_at_most_10_kb_of_the_body_is_kept(client, heartbeat):
    body = "é" * 6000 + "\x00"  # 12,001 bytes of UTF-8

    client.post(ping_url(heartbeat), data=body.encode(), content_type="text/plain")

    message = PollResult.objects.get().error_message
    assert len(message.encode()) <= 10 * 1024 + 2
    assert message.startswith("é" * 5000)


def test_a_nul_byte_in_the_body_is_kept_readable(client, heartbeat):
    client.post(ping_url(heartbeat), data=b"a\x00b", content_type="text/plain")

    assert PollResult.objects.get().error_message == "a\ufffdb"


def test_a_failure_ping_is_stored_down_with_the_body(client, heartbeat):
    response = client.post(
        ping_url(heartbeat, fail=True), data=b"disk full", content_type="text/plain"
    )

    assert response.status_code == 200
    result = PollResult.objects.get()
    assert (result.status, result.error_message) == (
        "down",
        "failure reported by ping: disk full",
    )


def test_an_unknown_key_is_not_found(client):
    response = client.get(reverse("pings:ping", args=[uuid.uuid4()]))

    assert response.status_code == 404
    assert PollResult.objects.count() == 0


def test_a_polled_project_cannot_be_pinged(client, heartbeat):
    Project.objects.filter(pk=heartbeat.pk).update(kind="poll")

    assert client.get(ping_url(heartbeat)).status_code == 404


def test_a_paused_project_takes_pings_without_recording_them(client, heartbeat):
    Project.objects.filter(pk=heartbeat.pk).update(enabled=False)

    response = client.get(ping_url(heartbeat))

    assert response.status_code == 200
    assert b"paused" in response.content
    assert PollResult.objects.count() == 0


def test_pings_are_limited_per_project(
    client, heartbeat, make_project, settings, one_minute
):
    settings.PING_RATE_LIMIT = 2
    other = make_project(kind="heartbeat", url="")

    answers = [client.get(ping_url(heartbeat)).status_code for _ in range(3)]

    assert answers == [200, 200, 429]
    assert client.get(ping_url(heartbeat)).headers["Retry-After"] == "60"
    assert client.get(ping_url(other)).status_code == 200
    assert PollResult.objects.filter(project=heartbeat).count() == 2


def test_other_methods_are_refused(client, heartbeat):
    assert client.put(ping_url(heartbeat)).status_code == 405


def test_a_ping_needs_no_login_and_no_csrf_token(heartbeat):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)

    assert strict.post(ping_url(heartbeat)).status_code == 200


def test_with_redis_url_every_web_worker_shares_the_cache_in_redis():
    settings_of_a_worker = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.CACHES['default']['BACKEND'])",
        ],
        cwd=ROOT,
        env=process_env(REDIS_URL="redis://127.0.0.1:6379/0"),
        capture_output=True,
        text=True,
        check=True,
    )

    assert settings_of_a_worker.stdout.strip().endswith("RedisCache")
