"""A poller whose check-in or lease thread cannot start (a limit on
threads or memory) ends at once with one clear line, its other threads
stopped, its leases and its row given back (issue #39, item 11). The
lease thread's failure used to leave the heartbeat thread running: the
process never ended, and only a signal killed it (-15)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from projects.models import PollerNode, ShardLease
from tests.support.factories import quick_projects
from tests.support.fleet import needs_postgresql
from tests.support.processes import ROOT, process_env

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

# The real runpoller in a process of its own, whose thread named argv[1]
# fails to start as a thread does when the process may start no more.
THREAD_FAILS = """
import sys, threading
import django
django.setup()
start = threading.Thread.start
def start_or_fail(thread):
    if thread.name == sys.argv[1]:
        raise RuntimeError("can't start new thread")
    start(thread)
threading.Thread.start = start_or_fail
from django.core.management import execute_from_command_line
execute_from_command_line(["manage.py", "runpoller"])
"""


@pytest.mark.slow
@pytest.mark.parametrize("thread", ["poller-check-in", "poller-leases"])
def test_a_thread_that_cannot_start_ends_the_poller_with_one_line(
    target_server, thread
):
    quick_projects(target_server, 2, timeout=5)
    poller = subprocess.Popen(
        [sys.executable, "-c", THREAD_FAILS, thread],
        cwd=ROOT,
        env=process_env(POLLER_CONTROL_BIND="127.0.0.1:0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _out, err = poller.communicate(timeout=60)
    finally:
        poller.kill()
    assert poller.returncode == 1, err
    assert "Traceback" not in err
    assert "CommandError: Cannot start the poller's check-in and lease threads" in err
    assert not ShardLease.objects.filter(owner__isnull=False).exists()
    assert PollerNode.objects.get().stopped_at is not None
