"""The `tasks` process end to end: a real qcluster runs a scheduled job and
stops on SIGTERM. The ORM broker runs on the test's own database (SQLite or
PostgreSQL); the Redis broker runs when Redis answers on 127.0.0.1:6379."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid

import pytest
from django_q.conf import Conf
from django_q.models import Schedule, Success
from django_q.tasks import async_task

from django.conf import settings

from projects.schedules import ScheduledJob, register_schedules
from tests.support.processes import ROOT, process_env
from tests.support.services import redis_answers
from tests.support.waiting import wait_until

REDIS_URL = "redis://127.0.0.1:6379/0"

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


def start_qcluster(
    queue_name: str, redis_url: str = "", **env: str
) -> subprocess.Popen:
    """A qcluster in a process group of its own, as honcho starts it."""
    env = process_env(
        Q_NAME=queue_name,
        REDIS_URL=redis_url,
        Q_WORKERS="1",
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
    (honcho, systemd); returns its stderr once it has exited."""
    if whole_group:
        os.killpg(cluster.pid, signal.SIGTERM)
    else:
        cluster.send_signal(signal.SIGTERM)
    try:
        _, err = cluster.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(cluster.pid, signal.SIGKILL)
    return err


@pytest.fixture
def queue_as(monkeypatch, queue_name):
    """Queue tasks from this test into the cluster's queue: the queue name
    is also the salt of their signature."""
    monkeypatch.setattr(Conf, "PREFIX", queue_name)
    monkeypatch.setattr(Conf, "CLUSTER_NAME", queue_name)
    return queue_name


def lines(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize(
    "redis_url",
    [
        pytest.param("", id="orm"),
        pytest.param(
            REDIS_URL,
            id="redis",
            marks=pytest.mark.skipif(
                not redis_answers(), reason="no Redis on 127.0.0.1:6379"
            ),
        ),
    ],
)
def test_qcluster_runs_a_scheduled_job_and_stops_on_sigterm(queue_name, redis_url):
    job = ScheduledJob(
        queue_name, "tests.support.qcluster_jobs.answer", Schedule.MINUTES, minutes=1
    )
    register_schedules([job])
    # "has stopped" is an INFO line; routine django-q lines are at WARNING
    # unless LOG_LEVEL asks for more.
    cluster = start_qcluster(queue_name, redis_url, LOG_LEVEL="INFO")
    try:
        # django-q2's scheduler looks at the schedules every 30 s.
        wait_until(
            lambda: Success.objects.filter(group=queue_name).exists(), timeout=90
        )
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    assert Success.objects.get(group=queue_name).result == 42
    assert "has stopped" in err


def test_sigterm_lets_the_task_in_hand_finish(queue_as, tmp_path):
    notes = tmp_path / "notes"
    cluster = start_qcluster(queue_as)
    try:
        async_task("tests.support.qcluster_jobs.slow_note", str(notes), 2)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
    finally:
        err = stop(cluster)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started", "done"]
    assert (
        Success.objects.get(func="tests.support.qcluster_jobs.slow_note").result
        == "done"
    )


def test_sigterm_to_the_whole_group_stops_it_and_the_task_runs_again(
    queue_as, tmp_path
):
    notes = tmp_path / "notes"
    timing = {"Q_TIMEOUT": "5", "Q_RETRY": "6"}
    cluster = start_qcluster(queue_as, **timing)
    try:
        async_task("tests.support.qcluster_jobs.slow_note", str(notes), 2)
        wait_until(lambda: lines(notes) == ["started"], timeout=20)
    finally:
        err = stop(cluster, whole_group=True)
    assert cluster.returncode == 0, err
    assert lines(notes) == ["started"]  # the worker was killed mid-task
    cluster = start_qcluster(queue_as, **timing)
    try:
        wait_until(lambda: "done" in lines(notes), timeout=30)
    finally:
        stop(cluster)
    assert lines(notes) == ["started", "started", "done"]
