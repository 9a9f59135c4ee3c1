"""Alerting end to end with the real processes: runpoller and qcluster as
subprocesses on the test database, a target that goes down and comes back,
and a webhook receiver that counts what arrives."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import urllib.request
import uuid
from datetime import timedelta

import pytest

from projects.models import (
    DeliveryAttempt,
    Incident,
    Notification,
    PollResult,
    Project,
)
from projects.notifications.signing import new_secret, signature
from tests.support.alerting import make_channel
from tests.support.factories import quick_projects
from tests.support.processes import ROOT, process_env
from tests.support.target_server import TargetServer
from tests.support.waiting import wait_until
from tests.support.webhook_receiver import HANG, WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FAILURE_THRESHOLD = 2
STORM = 50


class Processes:
    """runpoller and qcluster sharing a queue name of their own, each in a
    process group of its own; everything is killed at the end."""

    def __init__(self, **settings: str) -> None:
        defaults = {
            "Q_NAME": f"test-{uuid.uuid4().hex[:12]}",
            "REDIS_URL": "",
            "Q_WORKERS": "2",
            "POLLER_CONTROL_BIND": "127.0.0.1:0",
        }
        self.env = process_env(**{**defaults, **settings})
        self.started: list[subprocess.Popen] = []
        self.poller: subprocess.Popen | None = None

    def start(self, command: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "manage.py", command],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def start_poller(self) -> None:
        self.poller = self.start("runpoller")

    def kill_poller(self) -> None:
        """SIGKILL: no shutdown, no last flush; what is in memory is lost."""
        os.killpg(self.poller.pid, signal.SIGKILL)
        self.poller.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.fixture
def servers():
    with TargetServer() as target, WebhookReceiver() as receiver:
        yield target, receiver


def running(**settings: str):
    processes = Processes(**settings)
    processes.start("qcluster")
    processes.start_poller()
    return processes


def failing_projects(target: TargetServer, count: int, channels) -> list[Project]:
    projects = quick_projects(target, count, path="/switch")
    ids = [project.pk for project in projects]
    Project.objects.filter(pk__in=ids).update(failure_threshold=FAILURE_THRESHOLD)
    for project in projects:
        project.channels.add(*channels)
    return projects


def down_polls(project: Project) -> int:
    return PollResult.objects.filter(project=project, status="down").count()


def test_one_opened_across_a_killed_poller_and_one_resolved(servers):
    target, receiver = servers
    secret = new_secret()
    channel = make_channel(url=receiver.url(), secret=secret)
    [project] = failing_projects(target, 1, [channel])
    processes = running(ALERT_DIGEST_SECONDS="1")
    try:
        wait_until(
            lambda: PollResult.objects.filter(project=project).exists(), timeout=20
        )
        target.switch_status = 503
        wait_until(lambda: "incident.opened" in receiver.events(), timeout=30)

        processes.kill_poller()
        polls_before = down_polls(project)
        processes.start_poller()
        # The new poller goes on polling the outage it finds in the database.
        wait_until(lambda: down_polls(project) >= polls_before + 3, timeout=30)
        assert Incident.objects.count() == 1
        assert Notification.objects.filter(event="incident.opened").count() == 1

        target.switch_status = 200
        wait_until(lambda: "incident.resolved" in receiver.events(), timeout=30)
    finally:
        processes.stop_all()

    assert receiver.events() == ["incident.opened", "incident.resolved"]
    for request in receiver.requests:
        headers = request.headers
        expected = signature(
            secret,
            headers["webhook-id"],
            int(headers["webhook-timestamp"]),
            request.body,
        )
        assert headers["webhook-signature"] == expected
    incident = Incident.objects.get()
    assert incident.resolved_at is not None
    assert incident.failed_polls >= polls_before + 3


def test_a_storm_of_failures_gives_one_digest_per_channel(servers):
    target, receiver = servers
    with WebhookReceiver() as other_receiver:
        channels = [
            make_channel(url=receiver.url("/first")),
            make_channel(url=other_receiver.url("/second")),
        ]
        failing_projects(target, STORM, channels)
        # More healthy projects than failing ones: a storm, not a monitor
        # cut off from the network (that would hold every message).
        quick_projects(target, STORM + 5, path="/ok")
        processes = running(ALERT_DIGEST_SECONDS="8")
        try:
            wait_until(lambda: target.count("/switch") >= STORM, timeout=20)
            target.switch_status = 503
            wait_until(lambda: Incident.objects.count() == STORM, timeout=30)
            wait_until(
                lambda: not Notification.objects.filter(state="pending").exists(),
                timeout=40,
            )
        finally:
            processes.stop_all()

        for each in (receiver, other_receiver):
            # The first event may go at once alone; the rest are one digest.
            assert len(each.requests) <= 2
            assert each.events()[-1] == "digest"
            told = sum(
                r.json()["digest"]["count"] if r.json()["event"] == "digest" else 1
                for r in each.requests
            )
            assert told == STORM
    assert Notification.objects.filter(event="incident.opened").count() == 2 * STORM
    assert set(
        Notification.objects.filter(event="incident.opened").values_list(
            "state", flat=True
        )
    ) <= {"digested", "delivered"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def poller_status(bind: str, token: str) -> dict:
    request = urllib.request.Request(
        f"http://{bind}/status", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


def test_a_receiver_that_never_answers_holds_up_no_poll(servers):
    """Deliveries hang until their timeout on the tasks process; the
    poller's p99 scheduling lag over the last minute stays under 1 s."""
    target, receiver = servers
    receiver.answer(*[HANG] * 20)
    channel = make_channel(url=receiver.url())
    failing_projects(target, 5, [channel])
    quick_projects(target, 20, path="/ok")
    bind, token = f"127.0.0.1:{free_port()}", secrets.token_urlsafe(16)
    processes = running(
        ALERT_DIGEST_SECONDS="1",
        ALERT_DELIVERY_TIMEOUT="2",
        POLLER_CONTROL_BIND=bind,
        POLLER_CONTROL_TOKEN=token,
    )
    try:
        wait_until(lambda: target.count("/switch") >= 5, timeout=20)
        target.switch_status = 503
        timed_out = DeliveryAttempt.objects.filter(error__startswith="timed out")
        wait_until(lambda: timed_out.count() >= 5, timeout=40)
        status = poller_status(bind, token)
    finally:
        processes.stop_all()

    assert timed_out.count() >= 5
    assert status["lag_p99_ms"] < 1000


def test_escalation_tells_the_next_channel_once_unless_acknowledged(servers):
    """Two outages with a one-minute step to an on-call channel: the one
    nobody acknowledges reaches it once, then its recovery does; the one
    acknowledged before its minute never does. Both incidents are dated
    back two minutes rather than waited for."""
    from django_q.models import Schedule, Success

    from django.utils import timezone

    from projects.incidents.acknowledge import acknowledge
    from projects.models import Escalation, EscalationStep
    from projects.notifications.escalation import queue_escalations

    target, team = servers
    with WebhookReceiver() as on_call:
        ignored, answered = failing_projects(target, 2, [make_channel(url=team.url())])
        on_call_channel = make_channel(url=on_call.url())
        for project in (ignored, answered):
            step = EscalationStep.objects.create(project=project, delay_minutes=1)
            step.channels.add(on_call_channel)
        processes = Processes()
        processes.start_poller()
        try:
            wait_until(lambda: target.count("/switch") >= 2, timeout=20)
            target.switch_status = 503
            wait_until(lambda: Incident.objects.count() == 2, timeout=30)
            assert acknowledge(Incident.objects.get(project=answered).pk) is True
            two_minutes_ago = timezone.now() - timedelta(minutes=2)
            Incident.objects.update(confirmed_at=two_minutes_ago)
            Schedule.objects.filter(name="queue escalations").update(
                next_run=timezone.now()
            )
            processes.start("qcluster")  # its scheduler runs ~30 s after start
            escalation_ran = Success.objects.filter(
                func="projects.notifications.escalation.queue_escalations"
            )
            wait_until(escalation_ran.exists, timeout=60)
            wait_until(lambda: "incident.escalated" in on_call.events(), timeout=20)
            # Run again: the database remembers the step fired.
            assert queue_escalations() == 0

            target.switch_status = 200
            wait_until(lambda: "incident.resolved" in on_call.events(), timeout=30)
        finally:
            processes.stop_all()

    assert on_call.events() == ["incident.escalated", "incident.resolved"]
    names = [r.json()["project"]["name"] for r in on_call.requests]
    assert names == [ignored.name, ignored.name]
    # Decided in the task's transaction: nothing for the acknowledged one is
    # queued either, not even held back by a digest window.
    assert list(Escalation.objects.values_list("incident__project", flat=True)) == [
        ignored.pk
    ]
    escalated = Notification.objects.filter(event="incident.escalated")
    assert list(escalated.values_list("project", flat=True)) == [ignored.pk]
