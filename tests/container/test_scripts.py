"""What the image's scripts take from the rest of the project, checked
without building it: the health check derives the poller's control token
as polling.auth does, and every Procfile line the entrypoint runs exists."""

from __future__ import annotations

import importlib.util
import re

import pytest

from polling.auth import control_token
from tests.support.podman import ROOT

ENTRYPOINT = ROOT / "container" / "entrypoint.sh"


def load_healthcheck():
    path = ROOT / "container" / "healthcheck.py"
    spec = importlib.util.spec_from_file_location("container_healthcheck", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_health_check_derives_the_control_token_as_the_poller_does(
    settings, monkeypatch
):
    settings.POLLER_CONTROL_TOKEN = ""
    settings.SECRET_KEY = "a key shared by the web and the poller"
    monkeypatch.delenv("POLLER_CONTROL_TOKEN", raising=False)
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)

    assert load_healthcheck().control_token() == control_token()


def test_the_health_check_uses_an_explicit_control_token(monkeypatch):
    monkeypatch.setenv("POLLER_CONTROL_TOKEN", "t" * 40)

    assert load_healthcheck().control_token() == "t" * 40


@pytest.mark.parametrize(
    ("allowed_hosts", "host"),
    [
        ("monitor.example.com,localhost", "monitor.example.com"),
        (".example.com", "health.example.com"),
        ("*", "127.0.0.1"),
        ("", "127.0.0.1"),
    ],
)
def test_the_web_health_check_asks_by_a_host_name_django_allows(
    monkeypatch, allowed_hosts, host
):
    monkeypatch.setenv("ALLOWED_HOSTS", allowed_hosts)

    assert load_healthcheck().allowed_host() == host


@pytest.mark.parametrize(
    ("workers", "processes", "healthy"),
    [
        (None, 1, True),  # the default: the tasks in qcluster's process
        (None, 0, False),
        ("2", 6, True),  # django-q2's cluster: parent, sentinel, ...
        ("2", 1, False),  # the parent alone: its cluster died
    ],
)
def test_the_tasks_health_check_expects_the_processes_q_workers_runs(
    monkeypatch, workers, processes, healthy
):
    if workers is None:
        monkeypatch.delenv("Q_WORKERS", raising=False)
    else:
        monkeypatch.setenv("Q_WORKERS", workers)
    healthcheck = load_healthcheck()
    others = [b"python\0manage.py\0runpoller", b"gunicorn\0monitor.asgi"]
    running = [b"python\0manage.py\0qcluster"] * processes + others
    monkeypatch.setattr(healthcheck, "process_command_lines", lambda: running)

    assert healthcheck.tasks()[0] is healthy


def test_every_procfile_line_the_entrypoint_runs_exists():
    procfile = (ROOT / "Procfile").read_text()
    names = {line.partition(":")[0] for line in procfile.splitlines()}
    used = set(re.findall(r"procfile_command \"?(\w+)", ENTRYPOINT.read_text()))
    used |= {"web", "worker", "tasks"}  # run as procfile_command "$role"

    assert used <= names
