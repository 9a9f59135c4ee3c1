from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest

from django.core.management import call_command
from django.db import connection

from polling.engine.status import PollerStatus
from projects.models import PollResult
from tests.support.factories import quick_projects
from tests.support.processes import process_env, sigterm_when
from tests.support.threads import poller_threads
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_runs_until_sigterm_and_prints_a_summary(target_server):
    quick_projects(target_server, 5, timeout=5)
    signal_when_polled = sigterm_when(lambda: target_server.count("/ok") >= 5)
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


def start_poller(*args: str, preexec_fn=None, **settings: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "ENV_FILE": "/nonexistent",
        "SECRET_KEY": "runpoller-test-key",
        "DATABASE_URL": database_url(),
        "POLLER_CONTROL_BIND": "127.0.0.1:0",
        **settings,
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "runpoller", *args],
        cwd=ROOT,
        env=env,
        preexec_fn=preexec_fn,
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


def thread_names(pid: int) -> set[str]:
    """What the system calls each thread of process `pid`."""
    tasks = Path(f"/proc/{pid}/task")
    return {(task / "comm").read_text().strip() for task in tasks.iterdir()}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_its_threads_tell_the_system_their_names(target_server):
    # What `top -H` and bench/poller_run.py's CPU by thread rely on.
    quick_projects(target_server, 2, timeout=5)
    poller = start_poller()
    try:
        wait_until(lambda: PollResult.objects.count() >= 2, timeout=20)
        names = thread_names(poller.pid)
        poller.send_signal(signal.SIGTERM)
        _out, err = poller.communicate(timeout=20)
    finally:
        poller.kill()
    assert poller.returncode == 0, err
    assert {"worker-1", "scheduler", "writer", "reloader", "control"} <= names
    assert not any(name.startswith("poller-") for name in names)


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


def stopped_summary(out: str) -> dict:
    # A log line: the JSON follows the logger's name.
    [line] = [line for line in out.splitlines() if ' polling: {"event"' in line]
    return json.loads(line.partition(" polling: ")[2])


def test_it_prints_its_final_status_as_one_json_line(target_server):
    quick_projects(target_server, 2, timeout=5)
    sigterm_when(lambda: target_server.count("/ok") >= 2)
    out = StringIO()
    call_command("runpoller", stdout=out)
    summary = stopped_summary(out.getvalue())
    assert summary["event"] == "stopped"
    assert summary["state"] == "stopped"
    assert summary["active_projects"] == 2
    assert summary["results_written"] == PollResult.objects.count()
    assert summary["results_unsaved"] == summary["results_rejected"] == 0


def test_an_error_in_the_status_loop_stops_the_poller_in_order(
    threads_before, target_server, monkeypatch
):
    quick_projects(target_server, 3, timeout=5)

    def broken_line(status):
        raise ValueError("the status line is broken")

    monkeypatch.setattr(PollerStatus, "line", broken_line)
    with pytest.raises(ValueError, match="the status line is broken"):
        call_command("runpoller", "--status-interval", "0.05", stdout=StringIO())
    assert poller_threads(threads_before) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    # What was polled before the error was saved.
    assert PollResult.objects.count() == target_server.count("/ok")


@pytest.mark.slow
def test_a_taken_control_port_fails_at_once_with_one_clear_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        poller = start_poller(POLLER_CONTROL_BIND=f"127.0.0.1:{port}")
        # It gives up without retrying: the wait only bounds a hang (a
        # clock measured here would measure the machine's load instead).
        _out, err = poller.communicate(timeout=60)
    assert poller.returncode == 1
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            f"CommandError: Cannot serve the control endpoint on 127.0.0.1:{port}"
        )
    )
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_high_limit_starts_no_threads_it_does_not_need(target_server):
    """5,000 slots used to mean 100 worker threads at start, each reserving
    a stack: under these limits the poller could not start (issue #32).
    Threads now start as the polls in flight need them."""
    [project] = quick_projects(target_server, 1)

    def two_gigabytes_of_address_space():
        # 100 stacks of 64 MiB cannot fit in 2 GiB; the dozen threads a
        # poller runs besides its workers can.
        resource.setrlimit(resource.RLIMIT_STACK, (64 << 20, 64 << 20))
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    poller = start_poller(
        preexec_fn=two_gigabytes_of_address_space, MAX_CONCURRENT_HTTP="5000"
    )
    try:
        wait_until(
            lambda: (
                PollResult.objects.filter(project=project).exists()
                or poller.poll() is not None
            ),
            timeout=30,
        )
        poller.send_signal(signal.SIGTERM)
        _out, err = poller.communicate(timeout=60)
    finally:
        poller.kill()
    assert poller.returncode == 0, err[-2000:]
    assert PollResult.objects.filter(project=project).exists()


# Runs the real runpoller in a process of its own, with one start-up step
# patched to send SIGTERM to the process right after that step returns:
# the signal lands at that exact point of start-up, every time.
SIGTERM_AFTER_STEP = """
import importlib, os, signal, sys
import django
django.setup()
module_name, _, qualified = sys.argv[1].partition(":")
class_name, method_name = qualified.split(".")
owner = getattr(importlib.import_module(module_name), class_name)
step = getattr(owner, method_name)
def step_then_sigterm(*args, **kwargs):
    result = step(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    return result
setattr(owner, method_name, step_then_sigterm)
from django.core.management import execute_from_command_line
execute_from_command_line(["manage.py", "runpoller"])
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "step",
    [
        # The first step that must be undone: the SQLite lock, or on
        # PostgreSQL this poller's row.
        "polling.sqlite_lock:SinglePollerLock.acquire"
        if connection.vendor == "sqlite"
        else "polling.node:NodeCheckIn.register",
        "polling.control:ControlServer.start",
        "polling.engine.coordinator:Coordinator.start",
    ],
)
def test_a_sigterm_at_any_point_of_start_up_stops_cleanly(target_server, step):
    """Once the handlers are in, a SIGTERM stops the poller cleanly: the
    first case died with status -15 when they came after the lock."""
    quick_projects(target_server, 2, timeout=5)
    poller = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_AFTER_STEP, step],
        cwd=ROOT,
        env=process_env(POLLER_CONTROL_BIND="127.0.0.1:0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = poller.communicate(timeout=60)
    finally:
        poller.kill()
    assert poller.returncode == 0, err
    assert "Stopped." in out
