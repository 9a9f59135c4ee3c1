"""A change not every live poller heard of is sent again after 1, 2, 4...
s (POLLER_SYNC_RETRIES), then left to the pollers' periodic reload: a
poller that restarts, or starts too busy to answer within the client's
second, no longer misses a save for 5 minutes (polling/sync_sender.py)."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from polling.control import ControlServer
from polling.engine.config import PollerConfig
from polling.receivers import sync_projects
from polling.sync_sender import SyncSender
from polling.wiring import database_coordinator
from projects.models import Project
from tests.support.waiting import wait_until

QUICK = 0.01  # seconds before a first retry, when the test waits for it
NEVER = 600.0  # ... when the test must act before it


class Answers:
    """A send function that fails its first `failures` calls (False) and
    records every call's ids."""

    def __init__(self, failures: int, *, raises: bool = False) -> None:
        self.failures = failures
        self.raises = raises
        self.calls: list[list[int]] = []
        self._lock = threading.Lock()

    def __call__(self, ids: list[int]) -> bool:
        with self._lock:
            self.calls.append(ids)
            failed = len(self.calls) <= self.failures
        if failed and self.raises:
            raise ConnectionError("the poller went away")
        return not failed

    def count(self) -> int:
        with self._lock:
            return len(self.calls)


def test_ids_a_call_did_not_deliver_go_again_until_they_are_heard():
    answers = Answers(failures=2)
    sender = SyncSender(answers, retries=3, first_retry_seconds=QUICK)
    sender.submit([2, 1])

    wait_until(lambda: answers.count() == 3 and sender.retries_waiting == 0)
    assert answers.calls == [[1, 2], [1, 2], [1, 2]]


def test_a_send_that_raises_is_retried_like_one_that_failed(caplog):
    answers = Answers(failures=1, raises=True)
    sender = SyncSender(answers, retries=1, first_retry_seconds=QUICK)
    sender.submit([7])

    wait_until(lambda: answers.count() == 2 and sender.retries_waiting == 0)
    assert answers.calls == [[7], [7]]
    assert "Telling pollers of 1 projects failed" in caplog.text


def test_after_its_retries_a_change_is_left_to_the_periodic_reload(caplog):
    answers = Answers(failures=100)
    sender = SyncSender(answers, retries=2, first_retry_seconds=QUICK)
    with caplog.at_level(logging.WARNING, logger="polling.sync_sender"):
        sender.submit([5])
        wait_until(lambda: answers.count() == 3 and sender.retries_waiting == 0)

    assert answers.calls == [[5], [5], [5]]
    assert (
        "The pollers did not hear of 1 projects after 3 tries; "
        "their periodic reload (POLLER_RELOAD_INTERVAL) will"
    ) in caplog.text


def test_with_retries_off_a_failed_call_is_not_made_again(caplog):
    answers = Answers(failures=100)
    sender = SyncSender(answers, retries=0, first_retry_seconds=QUICK)
    with caplog.at_level(logging.WARNING, logger="polling.sync_sender"):
        sender.submit([5])
        assert sender.flush() is True

    assert (answers.calls, sender.retries_waiting) == ([[5]], 0)
    assert "did not hear" not in caplog.text


def test_a_project_saved_again_before_its_retry_goes_out_once():
    answers = Answers(failures=1)
    sender = SyncSender(answers, retries=3, first_retry_seconds=NEVER)
    sender.submit([4])
    assert sender.flush() is True
    assert sender.retries_waiting == 1

    sender.submit([4, 8])
    assert sender.flush() is True

    assert answers.calls == [[4], [4, 8]]
    assert sender.retries_waiting == 0  # heard: not sent a third time


@pytest.mark.django_db(transaction=True)
def test_a_poller_whose_endpoint_answers_late_still_hears_of_a_save(settings):
    # The real client, control endpoint and poller: the endpoint is not up
    # when the save is sent, as while a poller restarts.
    # Bound and not listening: a connection is refused, as by a poller not
    # up yet, and no other process can take the port meanwhile.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    settings.POLLER_CONTROL_URL = f"http://127.0.0.1:{port}"
    poller = database_coordinator(PollerConfig(spread_seconds=1, reload_interval=3600))
    poller.start()  # loads nothing: the project comes after
    control = ControlServer(
        poller, host="127.0.0.1", port=port, token=settings.POLLER_CONTROL_TOKEN
    )
    sender = SyncSender(sync_projects, retries=3, first_retry_seconds=0.5)
    try:
        # bulk_create: no post_save, so no call of the app's own sender.
        [project] = Project.objects.bulk_create(
            [Project(name="late", url="http://127.0.0.1:9/", interval=3600)]
        )
        sender.submit([project.pk])
        assert sender.flush() is True  # the first call has failed
        assert sender.retries_waiting == 1
        assert poller.target(project.pk) is None

        holder.close()
        control.start()

        wait_until(lambda: poller.target(project.pk) is not None, timeout=10)
        wait_until(lambda: sender.retries_waiting == 0)
    finally:
        holder.close()
        control.stop()
        poller.stop(timeout=10)
