"""Each runpoller keeps a PollerNode row fresh, so the tasks process can
tell when none is running."""

from __future__ import annotations

import os
import socket
from datetime import timedelta
from io import StringIO

import pytest

from django.core.management import call_command

from polling.node import NodeCheckIn
from projects.models import PollerNode
from tests.support.factories import quick_projects
from tests.support.outcomes import T0
from tests.support.processes import sigterm_when


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self):
        return self.now


@pytest.mark.django_db
def test_a_beat_moves_last_seen_while_the_poller_is_alive():
    clock, alive = Clock(), [True]
    check_in = NodeCheckIn(
        control_url="http://127.0.0.1:1", alive=lambda: alive[0], clock=clock
    )
    check_in.register(clock.now)

    clock.now += timedelta(seconds=10)
    assert check_in.beat() is True
    assert PollerNode.objects.get().last_seen_at == T0 + timedelta(seconds=10)

    alive[0] = False
    clock.now += timedelta(seconds=10)
    assert check_in.beat() is False
    assert PollerNode.objects.get().last_seen_at == T0 + timedelta(seconds=10)


@pytest.mark.django_db
def test_a_removed_row_is_written_again():
    clock = Clock()
    check_in = NodeCheckIn(clock=clock)
    check_in.register(clock.now)
    PollerNode.objects.all().delete()

    check_in.beat()

    assert PollerNode.objects.get().name == f"{socket.gethostname()}:{os.getpid()}"


@pytest.mark.django_db(transaction=True)
def test_runpoller_registers_itself_and_says_when_it_stopped(target_server):
    quick_projects(target_server, 2)
    # On PostgreSQL the row is written twice: first without a control URL
    # (the leases need its id before the control endpoint is up), then with
    # it once the poller runs. Stop after the second.
    stopper = sigterm_when(lambda: PollerNode.objects.exclude(control_url="").exists())

    call_command("runpoller", "--max-concurrent", "2", stdout=StringIO())
    stopper.join()

    node = PollerNode.objects.get()
    assert (node.host, node.pid) == (socket.gethostname(), os.getpid())
    assert node.control_url.startswith("http://127.0.0.1:")
    assert not node.control_url.endswith(":0")
    assert node.version == "0.1.0"
    assert node.started_at <= node.last_seen_at <= node.stopped_at
