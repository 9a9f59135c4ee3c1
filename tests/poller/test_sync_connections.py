"""Telling the pollers of a change opens no database session per change:
the web's sender thread and the poller's control endpoint each keep theirs
through a burst (CONN_MAX_AGE, as on PostgreSQL by default)."""

from __future__ import annotations

import threading

import pytest

from django.db import connection
from django.db.backends.signals import connection_created

from polling.client import ControlClient
from polling.sync_sender import SyncSender
from projects.models import Project

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sessions(monkeypatch):
    """The names of the threads that opened a database connection."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    opened: list[str] = []

    def note(sender, **kwargs) -> None:
        opened.append(threading.current_thread().name)

    connection_created.connect(note, weak=False)
    yield opened
    connection_created.disconnect(note)


def test_the_web_sender_keeps_its_connection_from_one_call_to_the_next(sessions):
    last = 3

    def send(ids: list[int]) -> None:
        Project.objects.filter(pk__in=ids).exists()
        if ids == [last]:
            connection.close()  # not left open past the test

    sender = SyncSender(send)
    for project_id in range(1, last + 1):
        sender.submit([project_id])
        assert sender.flush() is True

    assert sessions == ["web-sync-to-pollers"]


def test_the_pollers_endpoint_keeps_its_connection_from_one_sync_to_the_next(
    running_poller, sessions
):
    projects = Project.objects.bulk_create(  # no post_save: no sync of its own
        Project(name=f"p{n}", url="http://127.0.0.1:9/", interval=3600)
        for n in range(3)
    )
    client = ControlClient(base_url=running_poller.url)

    for project in projects:
        assert client.sync_projects([project.pk]) is True

    assert running_poller.coordinator.status().active_projects == 3
    # Not one per request's thread (named so by socketserver).
    by_requests = [name for name in sessions if "process_request_thread" in name]
    assert (by_requests, sessions.count("poller-control-db_0")) == ([], 1)


def test_a_burst_of_changes_goes_out_in_one_call():
    calls: list[list[int]] = []
    # Lingering far longer than the test: only flush() ends the wait.
    sender = SyncSender(calls.append, linger_seconds=600)
    for project_id in (3, 1, 2):
        sender.submit([project_id])

    assert sender.flush() is True
    assert calls == [[1, 2, 3]]


def test_a_change_goes_out_on_its_own_once_the_linger_is_over():
    sent = threading.Event()
    sender = SyncSender(lambda ids: sent.set(), linger_seconds=0.01)
    sender.submit([1])

    assert sent.wait(timeout=10)
