"""runpoller --processes N: children on their own control ports, one
parent that forwards signals; PostgreSQL only."""

from __future__ import annotations

import signal
import subprocess
import sys
from io import StringIO

import pytest

from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from polling.children import child_bind
from projects.models import PollerNode, ShardLease
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until


def test_each_child_gets_the_next_control_port():
    assert child_bind("127.0.0.1:8765", 0) == "127.0.0.1:8765"
    assert child_bind("127.0.0.1:8765", 2) == "127.0.0.1:8767"
    assert child_bind("[::1]:0", 3) == "[::1]:0"


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")
def test_several_processes_on_sqlite_are_refused():
    with pytest.raises(CommandError, match="--processes needs PostgreSQL"):
        call_command("runpoller", "--processes", "2", stdout=StringIO())


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_one_parent_runs_two_pollers_and_stops_them_on_sigterm(tmp_path):
    log = (tmp_path / "parent.log").open("w")
    parent = subprocess.Popen(
        [sys.executable, "manage.py", "runpoller", "--processes", "2"],
        cwd=ROOT,
        env=process_env(POLLER_CONTROL_BIND="127.0.0.1:0", POLLER_LEASE_TICK="1"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def two_pollers_share_the_shards():
            owners = set(
                ShardLease.objects.filter(expires_at__gt=timezone.now()).values_list(
                    "owner__pid", flat=True
                )
            )
            return len(owners) == 2 and parent.pid not in owners

        wait_until(two_pollers_share_the_shards, timeout=40)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == 0, (tmp_path / "parent.log").read_text()
    finally:
        parent.kill()
        parent.wait()
    nodes = PollerNode.objects.all()
    assert len(nodes) == 2
    assert all(node.stopped_at is not None for node in nodes)
