"""The `tasks` process end to end: a real qcluster runs a scheduled job and
stops on SIGTERM. The ORM broker runs on the test's own database (SQLite or
PostgreSQL); the Redis broker runs when Redis answers on 127.0.0.1:6379."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django_q.conf import Conf
from django_q.models import Failure, Schedule, Success
from django_q.tasks import async_task

from django.conf import settings

from projects.schedules import ScheduledJob, register_schedules
from tests.support.processes import ROOT, process_env
from tests.support.services import redis_answers
from tests.support.waiting import wait_until

REDIS_URL = "redis://127.0.0.1:6379/0"
ANSWER = "tests.support.qcluster_jobs.answer"
SLOW_NOTE = "tests.support.qcluster_jobs.slow_note"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue_name():
    """A queue (and Redis key prefix) of this test's own, so parallel runs
    on one Redis never take each other's tasks."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    if redis_answers():
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        keys = client.keys(f"django_q:{name}:*")
        if keys:
            client.delete(*keys)


# Q_WORKERS: 1 runs the tasks in qcluster's own process, more in
# django-q2's cluster of processes.
ONE_PROCESS, CLUSTER = "1", "2"


def start_qcluster(
    queue_name: str, redis_url: str = "", workers: str = ONE_PROCESS, **env: str
) -> subprocess.Popen:
    """A qcluster in a process group of its own, as honcho starts it."""
    env = process_env(
        Q_NAME=queue_name,
        REDIS_URL=redis_url,
        Q_WORKERS=workers,
        # Tasks queued by this test are signed with its key.
        SECRET_KEY=settings.SECRET_KEY,
        **env,
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def stop(cluster: subprocess.Popen, *, whole_group: bool = False) -> str:
    """SIGTERM to the process (docker stop) or to its whole process group
    (honcho, systemd); returns what it printed once it has exited."""
    if whole_group:
        os.killpg(cluster.pid, signal.SIGTERM)
    else:
        cluster.send_signal(signal.SIGTERM)
    try:
        out, err = cluster.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(cluster.pid, signal.SIGKILL)
    return out + err


def children(pid: int) -> list[str]:
    return [
        child
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


@pytest.fixture
def queue_as(monkeypatch, queue_name):
    """Queue tasks from this test into the cluster's queue: the queue name
    is also the salt of their signature."""
    monkeypatch.setattr(Conf, "PREFIX", queue_name)
    monkeypatch.setattr(Conf, "CLUSTER_NAME", queue_name)
    return queue_name


def lines(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


NEEDS_REDIS = pytest.mark.skipif(
    not redis_answers(), reason="no Redis on 127.0.0.1:6379"
)


@pytest.mark.parametrize(
    ("redis_url", "workers"),
    [
        pytest.param("", ONE_PROCESS, id="orm-one-process"),
        pytest.param(REDIS_URL, ONE_PROCESS, id="redis-one-process", marks=NEEDS_REDIS),
        pytest.param("", CLUSTER, id="orm-cluster"),
        pytest.param(REDIS_URL, CLUSTER, id="redis-cluster", marks=NEEDS_REDIS),
    ],
)
def test_qcluster_runs_a_scheduled_job_and_stops_on_sigterm(
    queue_name, redis_url, workers
):
    job = ScheduledJob(queue_name, ANSWER, Schedule.MINUTES, minutes=1)
    register_schedules([job])
    cluster = start_qcluster(queue_name, redis_url, workers)
    try:
        # django-q2's scheduler looks at the schedules every 30 s.
        wait_until(
            lambda: Success.objects.filter(group=queue_name).exists(), timeout=90
        )
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    assert Success.objects.get(group=queue_name).result == 42
    assert "Stopped." in err


@pytest.mark.parametrize("workers", [ONE_PROCESS, CLUSTER])
def test_sigterm_lets_the_task_in_hand_finish(queue_as, tmp_path, workers):
    notes = tmp_path / "notes"
    cluster = start_qcluster(queue_as, workers=workers)
    try:
        async_task(SLOW_NOTE, str(notes), 2)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started", "done"]
    assert Success.objects.get(func=SLOW_NOTE).result == "done"


def test_sigterm_to_a_clusters_whole_group_kills_the_task_and_it_runs_again(
    queue_as, tmp_path
):
    """django-q2's workers take SIGTERM (so its guard can kill a task past
    its timeout): the task in hand dies and is handed out again."""
    notes = tmp_path / "notes"
    timing = {"Q_TIMEOUT": "5", "Q_RETRY": "6"}
    cluster = start_qcluster(queue_as, workers=CLUSTER, **timing)
    try:
        async_task(SLOW_NOTE, str(notes), 2)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
    finally:
        err = stop(cluster, whole_group=True)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started"]  # the worker was killed mid-task
    cluster = start_qcluster(queue_as, workers=CLUSTER, **timing)
    try:
        wait_until(lambda: "done" in lines(notes), timeout=30)
    finally:
        stop(cluster)
    assert lines(notes) == ["started", "started", "done"]


def test_in_one_process_sigterm_to_the_whole_group_lets_the_task_finish(
    queue_as, tmp_path
):
    notes = tmp_path / "notes"
    cluster = start_qcluster(queue_as)
    try:
        async_task(SLOW_NOTE, str(notes), 2)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
        assert children(cluster.pid) == []  # no sentinel, pusher, monitor
    finally:
        err = stop(cluster, whole_group=True)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started", "done"]


def test_in_one_process_a_task_past_its_timeout_fails_and_the_next_one_runs(
    queue_as, tmp_path
):
    notes = tmp_path / "notes"
    cluster = start_qcluster(queue_as, Q_TIMEOUT="1", Q_RETRY="600")
    try:
        # Longer than every wait here: only the timeout ends it in time.
        async_task(SLOW_NOTE, str(notes), 300)
        async_task(ANSWER)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
        wait_until(lambda: Success.objects.filter(func=ANSWER).exists(), timeout=20)
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started"]
    failed = Failure.objects.get(func=SLOW_NOTE)
    assert "Task exceeded maximum timeout value (1 seconds)" in failed.result


def test_in_one_process_only_the_workers_thread_takes_the_timeouts_alarm(queue_as):
    """The kernel hands SIGALRM to any thread that does not block it; a
    helper thread taking it would leave a task past its timeout running."""
    cluster = start_qcluster(queue_as)
    try:
        # Once a task has run, the worker (the main thread) is past starting
        # its helpers, which it does with SIGALRM blocked for that moment
        # (each inherits the mask): sampled then, CI saw it blocked.
        async_task(ANSWER)
        wait_until(lambda: Success.objects.filter(func=ANSWER).exists(), timeout=20)
        wait_until(lambda: len(threads_of(cluster.pid)) >= 4, timeout=30)
        blocked = {
            tid: alarm_blocked(cluster.pid, tid) for tid in threads_of(cluster.pid)
        }
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    worker_thread = str(cluster.pid)  # the main thread
    assert blocked.pop(worker_thread) is False
    assert set(blocked.values()) == {True}  # pusher, monitor, guard


def threads_of(pid: int) -> list[str]:
    return [task.name for task in Path(f"/proc/{pid}/task").iterdir()]


def alarm_blocked(pid: int, tid: str) -> bool:
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    mask = int(re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.M)[1], 16)
    return bool(mask & (1 << (signal.SIGALRM - 1)))
