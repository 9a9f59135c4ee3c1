"""A server whose certificate expires in 5 days, polled by a running
poller: exactly one certificate incident and one notification."""

from __future__ import annotations

import ssl
from datetime import UTC, datetime, timedelta

import pytest

from projects.models import Incident, Notification, NotificationChannel, PollResult
from tests.support.target_server import TargetServer
from tests.support.waiting import wait_until


@pytest.fixture
def expiring_server(tls_ca):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    not_after = datetime.now(UTC) + timedelta(days=5)
    tls_ca.issue_cert("127.0.0.1", not_after=not_after).configure_cert(context)
    with TargetServer(ssl_context=context) as server:
        yield server


def test_a_certificate_expiring_in_5_days_warns_once(
    running_poller, make_project, expiring_server
):
    channel = NotificationChannel.objects.create(
        name="ops", kind="webhook", url="http://127.0.0.1:9/hook"
    )
    project = make_project(
        url=expiring_server.url("/ok"),
        verify_tls=False,
        interval=1,
        interval_unit="hours",
    )
    project.channels.add(channel)
    poller = running_poller.coordinator

    poller.sync_project(project.pk)
    for polls in (1, 2, 3):
        if polls > 1:
            _poll_now(poller, project.pk)
        wait_until(
            lambda n=polls: PollResult.objects.filter(project=project).count() >= n
        )

    [incident] = Incident.objects.filter(project=project)
    assert incident.kind == "certificate"
    assert incident.first_error.startswith("certificate expires in 5 days")
    assert [(n.event, n.channel_id) for n in Notification.objects.all()] == [
        ("incident.opened", channel.pk)
    ]
    assert PollResult.objects.filter(project=project, status="up").count() == 3


def _poll_now(poller, project_id: int) -> None:
    """A changed target is polled at once: touch it so the poller polls."""
    target = poller.target(project_id)
    poller.remove_project(project_id)
    poller.add_project(target)
