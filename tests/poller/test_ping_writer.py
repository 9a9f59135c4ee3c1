"""The ping writer (polling/pings/writer.py, waiting.py): a ping answered stored is
in the database when the answer arrives; a writer that cannot keep up
refuses pings rather than dropping them; stopping stores every ping it
accepted. A real store on the test database; the writer is held back by
locking the results table from another connection."""

from __future__ import annotations

import threading

import pytest

from django.db import connection
from django.utils import timezone

from polling.pings.answers import Verdict
from polling.pings.batch import PingStore
from polling.pings.rules import Ping
from polling.pings.waiting import record, shared_writer
from polling.pings.writer import Overloaded, PingWriter
from projects.models import PollResult
from tests.support.waiting import wait_until
from tests.support.writes_blocked import results_blocked

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def heartbeats(make_project):
    return [
        make_project(kind="heartbeat", url="", interval=1, interval_unit="hours")
        for _ in range(8)
    ]


@pytest.fixture
def writer():
    store = PingStore()
    writer = PingWriter(store.save, queue_size=2, close=store.close)
    yield writer
    writer.stop()


def ping(project, message: str = "") -> Ping:
    return Ping(project.ping_key, False, message, timezone.now())


def stored(message: str) -> bool:
    return PollResult.objects.filter(error_message=message).exists()


def test_a_ping_answered_stored_is_in_the_database_when_the_answer_arrives(
    heartbeats,
):
    missing = []

    def ping_and_look(project) -> None:
        try:
            for n in range(5):
                message = f"{project.pk}-{n}"
                assert record(ping(project, message)) is Verdict.STORED
                if not stored(message):  # read on this thread's own connection
                    missing.append(message)
        finally:
            connection.close()

    threads = [threading.Thread(target=ping_and_look, args=(p,)) for p in heartbeats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert missing == []
    assert PollResult.objects.count() == 40


def test_a_full_queue_refuses_pings_at_once_and_stores_those_it_took(
    writer, heartbeats
):
    with results_blocked():
        first = writer.submit(ping(heartbeats[0], "in the batch"))
        wait_until(writer.busy)  # taken into a batch that cannot commit
        queued = [writer.submit(ping(p, f"queued {p.pk}")) for p in heartbeats[1:3]]
        with pytest.raises(Overloaded):
            writer.submit(ping(heartbeats[3], "refused"))
        assert not first.done()

    answers = [future.result(timeout=30) for future in [first, *queued]]
    assert answers == [Verdict.STORED] * 3
    assert PollResult.objects.count() == 3
    assert not stored("refused")


def test_a_ping_not_taken_in_time_is_withdrawn_and_never_stored(heartbeats, settings):
    settings.PING_QUEUE_SECONDS = 0.2
    answers = {}

    def ping_in_thread(name: str, project) -> None:
        answers[name] = record(ping(project, name))
        connection.close()

    with results_blocked():
        first = threading.Thread(target=ping_in_thread, args=("first", heartbeats[0]))
        first.start()
        wait_until(lambda: shared_writer().busy())
        ping_in_thread("second", heartbeats[1])  # waits 0.2 s behind the first
    first.join()

    assert answers == {"first": Verdict.STORED, "second": Verdict.OVERLOADED}
    assert stored("first")
    assert not stored("second")


def test_stop_stores_every_ping_it_accepted(writer, heartbeats):
    with results_blocked():
        first = writer.submit(ping(heartbeats[0], "in the batch"))
        wait_until(writer.busy)
        queued = [writer.submit(ping(p, f"queued {p.pk}")) for p in heartbeats[1:3]]
        stopping = threading.Thread(target=writer.stop)
        stopping.start()
        wait_until(lambda: writer.stopping)
        with pytest.raises(Overloaded):
            writer.submit(ping(heartbeats[3], "after stop"))
    stopping.join(timeout=30)

    assert not stopping.is_alive()
    assert [f.result(timeout=0) for f in [first, *queued]] == [Verdict.STORED] * 3
    assert PollResult.objects.count() == 3
