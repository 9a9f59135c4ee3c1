from __future__ import annotations

import itertools
import ssl
import threading

import pytest
import trustme

from projects.models import Project
from tests.support.target_server import TargetServer

_names = itertools.count(1)


@pytest.fixture(autouse=True, scope="session")
def admin_discovered():
    """The web process finds the admin's modules as it loads its URLs
    (monitor/apps.py); tests that read the admin's registry before any
    request or reverse() see every ModelAdmin too."""
    from django.contrib import admin

    admin.autodiscover()


@pytest.fixture(autouse=True)
def poller_syncs_sent():
    """Whatever a test handed to the pollers has gone out before the next
    test starts: no call (or its warning) lands in another test."""
    yield
    from polling.receivers import SENDER

    SENDER.flush()


@pytest.fixture(autouse=True)
def ping_writer_stopped():
    """A test that pinged leaves no writer thread (nor its database
    connection) behind: the next ping starts a new one."""
    yield
    from polling.pings.waiting import stop_shared_writer

    stop_shared_writer()


@pytest.fixture
def threads_before() -> set[threading.Thread]:
    """The threads alive when the test began (see tests/support/threads.py)."""
    return set(threading.enumerate())


@pytest.fixture
def make_project(db):
    """Create a saved, valid Project; keyword arguments override fields."""

    def make(**fields) -> Project:
        number = next(_names)
        fields.setdefault("name", f"project {number}")
        fields.setdefault("url", f"http://127.0.0.1:9/{number}")
        project = Project(**fields)
        project.full_clean()
        project.save()
        return project

    return make


@pytest.fixture(params=["alone", "on-executor"])
def poll_mode(request) -> str:
    """How a probe test runs its polls: see tests/support/executor_probe.py."""
    return request.param


@pytest.fixture
def target_server():
    """A TargetServer on 127.0.0.1 (see tests/support/target_server.py)."""
    with TargetServer() as server:
        yield server


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    """A throwaway certificate authority that no client trusts by default."""
    return trustme.CA()


@pytest.fixture(scope="session")
def tls_ca_bundle(tls_ca, tmp_path_factory) -> str:
    """tls_ca's certificate as a PEM file, for make_handle(ca_bundle=...)."""
    path = tmp_path_factory.mktemp("tls") / "ca.pem"
    tls_ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def tls_target_server(tls_ca):
    """A TargetServer speaking https with a certificate from tls_ca."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1").configure_cert(context)
    with TargetServer(ssl_context=context) as server:
        yield server


@pytest.fixture
def running_poller(transactional_db, settings):
    """A Coordinator and its control server on a free port, with the web
    side's settings pointing at it. Yields the RunningPoller."""
    from polling.control import ControlServer
    from polling.engine.config import PollerConfig
    from polling.wiring import database_coordinator

    coordinator = database_coordinator(
        PollerConfig(spread_seconds=1, reload_interval=3600)
    )
    coordinator.start()
    control = ControlServer(
        coordinator, host="127.0.0.1", port=0, token=settings.POLLER_CONTROL_TOKEN
    )
    control.start()
    settings.POLLER_CONTROL_URL = f"http://127.0.0.1:{control.port}"
    yield RunningPoller(coordinator, control, settings.POLLER_CONTROL_URL)
    control.stop()
    coordinator.stop(timeout=10)


class RunningPoller:
    def __init__(self, coordinator, control, url: str) -> None:
        self.coordinator = coordinator
        self.control = control
        self.url = url


@pytest.fixture
def add_polls(db):
    """Save polls of a project as the poller would, rollups included.

    `statuses` reads oldest first, "u" for up and "d" for down; polls are
    `every` apart and the last one is at `end`. `response_time_ms` is one
    value for all polls or one per poll (None: no response). The project's
    state follows its last poll (a last "d" is down, as if confirmed)
    unless `state` says otherwise.
    """
    from datetime import timedelta

    from projects.housekeeping.rollups import rebuild_rollups
    from projects.models import PollResult, Status

    def add(
        project: Project,
        statuses: str,
        *,
        end,
        every=timedelta(minutes=1),
        response_time_ms=100,
        error: str = "expected 200, got 503",
        state: str | None = None,
    ) -> list[PollResult]:
        times = response_time_ms
        if not isinstance(times, list | tuple):
            times = [times] * len(statuses)
        polls = [
            PollResult(
                project=project,
                polled_at=end - every * (len(statuses) - 1 - i),
                status=Status.UP if status == "u" else Status.DOWN,
                status_code=200 if status == "u" else 503,
                response_time_ms=ms,
                error_message="" if status == "u" else error,
            )
            for i, (status, ms) in enumerate(zip(statuses, times, strict=True))
        ]
        PollResult.objects.bulk_create(polls)
        latest = PollResult.objects.filter(project=project).latest("polled_at")
        project.last_polled_at = latest.polled_at
        project.last_status = latest.status
        project.last_status_code = latest.status_code
        project.last_response_time_ms = latest.response_time_ms
        project.state = state or latest.status
        project.save()
        rebuild_rollups(project_ids=[project.pk])
        return polls

    return add


# Notifications -------------------------------------------------------------


class FakeClock:
    """A clock for the deliverer: `now()` stands still until `advance()`."""

    def __init__(self, start) -> None:
        self.current = start

    def now(self):
        return self.current

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self.current += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    from django.utils import timezone

    return FakeClock(timezone.now())


@pytest.fixture
def a(db):
    """Team "alpha" with one of everything (tests/support/teams.py)."""
    from tests.support.teams import make_team

    return make_team("alpha")


@pytest.fixture
def b(db):
    """Team "bravo", everything of which says "bravo": a page that leaks
    any of it to alpha's people is one `"bravo" in html` away from failing."""
    from tests.support.teams import make_team

    return make_team("bravo")


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on 127.0.0.1 (tests/support/smtp_server.py), and Django's
    e-mail settings pointing at it."""
    from tests.support.smtp_server import SMTPServer

    server = SMTPServer()
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = server.port
    settings.EMAIL_USE_TLS = False
    yield server
    server.stop()


@pytest.fixture
def webhook_receiver():
    """A WebhookReceiver on 127.0.0.1 (see tests/support/webhook_receiver.py)."""
    from tests.support.webhook_receiver import WebhookReceiver

    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def make_channel(db):
    """Create a saved NotificationChannel; a webhook by default."""
    from projects.models import NotificationChannel
    from projects.notifications.signing import new_secret

    def make(**fields):
        number = next(_names)
        fields.setdefault("name", f"channel {number}")
        fields.setdefault("kind", NotificationChannel.Kind.WEBHOOK)
        fields.setdefault("url", "http://127.0.0.1:9/hook")
        if fields["kind"] == NotificationChannel.Kind.WEBHOOK:
            fields.setdefault("secret", new_secret())
        return NotificationChannel.objects.create(**fields)

    return make


@pytest.fixture
def queue_notification(db, make_project, clock):
    """Write an outbox row as the writer would: `event` for `channel`, with
    a version 1 payload about a project (made up when not given), at the
    clock's time unless `at` says otherwise."""
    from projects.models import Notification

    def queue(channel, event="incident.opened", *, project=None, at=None, **fields):
        project = project or make_project()
        at = at or clock.now()
        payload = {
            "version": 1,
            "event": event,
            "occurred_at": at.isoformat(),
            "project": {"id": project.pk, "name": project.name, "url": project.url},
            "incident": {
                "id": 1,
                "started_at": at.isoformat(),
                "confirmed_at": at.isoformat(),
                "resolved_at": None,
                "duration_seconds": None,
                "first_error": "expected 200, got 503",
                "last_error": "expected 200, got 503",
            },
            "links": {"project": f"http://testserver/projects/{project.pk}/"},
        }
        fields.setdefault("key", f"{event}:{project.pk}:{channel.pk}:{next(_names)}")
        return Notification.objects.create(
            event=event,
            channel=channel,
            project=project,
            payload=payload,
            created_at=at,
            next_attempt_at=at,
            **fields,
        )

    return queue


# The REST API -------------------------------------------------------------


def _api_client(scope: str):
    from rest_framework.test import APIClient

    from projects.models import ApiKey

    _, key = ApiKey.issue(f"{scope} key", scope)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    client.key = key
    return client


@pytest.fixture
def write_api(db):
    """An APIClient sending a fresh write key (its clear text: `.key`)."""
    return _api_client("write")


@pytest.fixture
def read_api(db):
    """An APIClient sending a fresh read-only key."""
    return _api_client("read")
