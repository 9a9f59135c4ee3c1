from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from django.db import connection

from polling.sqlite_lock import PollerAlreadyRunning, SinglePollerLock, lock_for
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path):
    first = SinglePollerLock(tmp_path / "db.sqlite3")
    first.acquire()
    second = SinglePollerLock(tmp_path / "db.sqlite3")
    with pytest.raises(PollerAlreadyRunning) as refused:
        second.acquire()
    first.release()
    second.acquire()
    second.release()
    message = str(refused.value)
    assert f"(pid {os.getpid()})" in message
    assert "several pollers need PostgreSQL" in message


def test_postgresql_and_in_memory_sqlite_need_no_lock():
    postgres = {"ENGINE": "django.db.backends.postgresql", "NAME": "monitor"}
    memory = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    on_disk = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/db.sqlite3"}
    assert lock_for(postgres) is None
    assert lock_for(memory) is None
    assert str(lock_for(on_disk).path) == "/srv/db.sqlite3.poller.lock"


def start_poller() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "runpoller"],
        cwd=ROOT,
        env=process_env(POLLER_CONTROL_BIND="127.0.0.1:0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lock_holder() -> str:
    path = lock_for(connection.settings_dict).path
    return path.read_text().strip() if path.exists() else ""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="PostgreSQL shares projects instead"
)
def test_a_second_poller_on_one_sqlite_database_refuses_to_start():
    first = start_poller()
    try:
        wait_until(lambda: lock_holder() == str(first.pid), timeout=30)
        second = start_poller()
        _out, err = second.communicate(timeout=30)
        assert second.returncode == 1
        last = err.strip().splitlines()[-1]
        assert f"Another poller (pid {first.pid}) is already running" in last
        assert "several pollers need PostgreSQL" in last
        # SIGKILL leaves the file behind, but not the lock.
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        third = start_poller()
        try:
            wait_until(lambda: lock_holder() == str(third.pid), timeout=30)
        finally:
            third.send_signal(signal.SIGTERM)
            _out, err = third.communicate(timeout=30)
        assert third.returncode == 0, err
    finally:
        first.kill()
        first.wait()
