from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path

import pytest

from django.core.management import call_command
from django.db import connection

from projects.models import PollResult
from tests.factories import quick_projects
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_runs_until_sigterm_and_prints_a_summary(target_server):
    quick_projects(target_server, 5, timeout=5)
    signal_when_polled = threading.Thread(
        target=lambda: (
            wait_until(lambda: target_server.count("/ok") >= 5),
            os.kill(os.getpid(), signal.SIGTERM),
        )
    )
    signal_when_polled.start()
    out = StringIO()
    call_command("runpoller", "--max-concurrent", "3", stdout=out)
    signal_when_polled.join()
    assert "Stopping: finishing polls in flight" in out.getvalue()
    assert "Stopped. 5 projects" in out.getvalue()
    assert "queued polls were not started" in out.getvalue()
    assert PollResult.objects.count() == target_server.count("/ok")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def database_url() -> str:
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user, host, port = settings["USER"], settings["HOST"], settings["PORT"] or 5432
    return f"postgres://{user}@{host}:{port}/{settings['NAME']}"


def start_poller(*args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "ENV_FILE": "/nonexistent",
        "SECRET_KEY": "runpoller-test-key",
        "DATABASE_URL": database_url(),
        "POLLER_CONTROL_BIND": "127.0.0.1:0",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "runpoller", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_sigterm_finishes_polls_in_flight_and_saves_every_result(target_server):
    quick_projects(target_server, 30, path="/delay/1500", timeout=5)
    poller = start_poller("--max-concurrent", "30")
    try:
        wait_until(lambda: target_server.count("/delay") >= 30, timeout=20)
        poller.send_signal(signal.SIGTERM)
        out, err = poller.communicate(timeout=20)
    finally:
        poller.kill()
    assert poller.returncode == 0, err
    assert "Stopped." in out
    assert PollResult.objects.count() == target_server.count("/delay") >= 30
    assert PollResult.objects.filter(status="up").count() == PollResult.objects.count()


@pytest.mark.slow
def test_a_second_signal_exits_at_once(target_server):
    quick_projects(target_server, 3, path="/hang", timeout=5)
    poller = start_poller()
    try:
        wait_until(lambda: target_server.count("/hang") >= 3, timeout=20)
        poller.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        started = time.monotonic()
        poller.send_signal(signal.SIGTERM)
        poller.communicate(timeout=5)
    finally:
        poller.kill()
    assert time.monotonic() - started < 3  # not the 5 s poll timeout
    assert poller.returncode == 1
