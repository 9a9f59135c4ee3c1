"""runpoller --processes N: children on their own control ports, one
parent that forwards signals; PostgreSQL only."""

from __future__ import annotations

import signal
import subprocess
import sys
from io import StringIO
from pathlib import Path

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


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler of its own for `signum`."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask.split()[1], 16) >> (signum - 1) & 1)


def children_of(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def start_parent(tmp_path) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / "parent.log"
    parent = subprocess.Popen(
        [sys.executable, "manage.py", "runpoller", "--processes", "2"],
        cwd=ROOT,
        env=process_env(POLLER_CONTROL_BIND="127.0.0.1:0", POLLER_LEASE_TICK="1"),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    return parent, log


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_a_sigterm_before_the_children_start_stops_the_parent_cleanly(tmp_path):
    """Sent as soon as the parent catches SIGTERM, which is before Django
    is set up: it starts no poller and exits 0. It used to catch it only
    just before starting its children: the children then got it in their
    own start-up and died with -15 (the parent with status 1), or started
    after it and ran on."""
    parent, log = start_parent(tmp_path)
    try:
        wait_until(lambda: catches(parent.pid, signal.SIGTERM), timeout=30)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == 0, log.read_text()
    finally:
        parent.kill()
        parent.wait()
    assert "Stopped before starting any poller." in log.read_text()
    assert not PollerNode.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_a_sigterm_while_the_children_start_stops_them_all_cleanly(tmp_path):
    """Sent as soon as both children exist, in their own start-up: each
    stops cleanly and the parent exits 0 (it used to exit 1: "A poller
    exited with status -15")."""
    parent, log = start_parent(tmp_path)
    try:
        wait_until(lambda: len(children_of(parent.pid)) == 2, timeout=60)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == 0, log.read_text()
    finally:
        parent.kill()
        parent.wait()
    assert "Stopped 2 pollers." in log.read_text()
