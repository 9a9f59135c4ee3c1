from __future__ import annotations

import queue
import threading
import time

import pytest

from polling.engine import writer as writer_module
from polling.engine.writer import ResultWriter, StoreUnavailable
from tests.support.outcomes import outcome
from tests.support.waiting import wait_until


class RecordingStore:
    """A store that keeps batches in memory and can fail on demand."""

    def __init__(self, *, failures: int = 0, refuse: frozenset = frozenset()):
        self.batches: list[list] = []
        self.failures_left = failures
        # Project ids whose outcomes the store refuses, as bad data.
        self.refuse = refuse
        self.closed = False
        self.saved = threading.Event()

    def save(self, outcomes) -> int:
        if self.failures_left:
            self.failures_left -= 1
            raise StoreUnavailable("the database is unreachable")
        if any(o.project_id in self.refuse for o in outcomes):
            raise ValueError("out of range")
        self.batches.append(list(outcomes))
        self.saved.set()
        return len(outcomes)

    def close(self) -> None:
        self.closed = True

    @property
    def saved_ids(self) -> list[int]:
        return [o.project_id for batch in self.batches for o in batch]


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(writer_module, "FIRST_RETRY_SECONDS", 0.01)


def test_it_saves_in_batches_of_at_most_batch_size():
    results: queue.Queue = queue.Queue()
    store = RecordingStore()
    writer = ResultWriter(results, store, batch_size=500, batch_seconds=10)
    for i in range(1200):
        results.put(outcome(i))
    writer.start()
    writer.stop(timeout=5)
    assert [len(batch) for batch in store.batches] == [500, 500, 200]
    assert store.saved_ids == list(range(1200))
    assert writer.written == 1200


def test_it_saves_a_partial_batch_after_batch_seconds():
    results: queue.Queue = queue.Queue()
    store = RecordingStore()
    writer = ResultWriter(results, store, batch_size=500, batch_seconds=0.2)
    writer.start()
    try:
        for i in range(3):
            results.put(outcome(i))
        assert store.saved.wait(timeout=2) is True
        assert store.saved_ids == [0, 1, 2]
    finally:
        writer.stop(timeout=5)


def test_a_failed_write_keeps_the_batch_and_retries_until_saved():
    results: queue.Queue = queue.Queue()
    store = RecordingStore(failures=3)
    writer = ResultWriter(results, store, batch_size=10, batch_seconds=0.05)
    for i in range(5):
        results.put(outcome(i))
    writer.start()
    writer.stop(timeout=5)
    assert store.saved_ids == [0, 1, 2, 3, 4]
    assert writer.failed_writes == 3
    assert writer.written == 5


def test_while_writes_fail_the_queue_fills_instead_of_dropping():
    results: queue.Queue = queue.Queue(maxsize=5)
    store = RecordingStore(failures=10**9)
    writer = ResultWriter(results, store, batch_size=3, batch_seconds=0.01)
    writer.start()
    for i in range(8):  # 3 in the failing batch, 5 fill the queue
        results.put(outcome(i), timeout=2)
    with pytest.raises(queue.Full):
        results.put(outcome(99), timeout=0.2)
    assert writer.pending == 3
    store.failures_left = 0  # the database is back
    writer.stop(timeout=5)
    assert sorted(store.saved_ids) == list(range(8))


def test_stop_saves_everything_queued_and_closes_the_store():
    results: queue.Queue = queue.Queue()
    store = RecordingStore()
    writer = ResultWriter(results, store, batch_size=500, batch_seconds=60)
    writer.start()
    for i in range(7):
        results.put(outcome(i))
    started = time.monotonic()
    writer.stop(timeout=5)
    assert time.monotonic() - started < 2  # did not wait out batch_seconds
    assert store.saved_ids == list(range(7))
    assert store.closed is True


def test_collect_and_flush_work_as_single_steps():
    results: queue.Queue = queue.Queue()
    store = RecordingStore()
    writer = ResultWriter(results, store, batch_size=2, batch_seconds=0)
    for i in range(3):
        results.put(outcome(i))
    assert writer.collect() is True
    assert writer.pending == 2
    assert writer.flush() == 2
    assert writer.flush() == 0
    assert store.saved_ids == [0, 1]


def test_a_refused_outcome_is_set_aside_and_the_rest_saved(caplog):
    results: queue.Queue = queue.Queue()
    store = RecordingStore(refuse=frozenset({13}))
    writer = ResultWriter(results, store, batch_size=50, batch_seconds=0.05)
    for i in range(10, 20):
        results.put(outcome(i))
    writer.start()
    writer.stop(timeout=5)
    assert sorted(store.saved_ids) == [i for i in range(10, 20) if i != 13]
    assert writer.rejected == 1
    assert writer.written == 9
    assert writer.failed_writes == 0  # bad data is not retried as an outage
    [set_aside] = [r for r in caplog.records if "Set aside" in r.getMessage()]
    assert "project 13" in set_aside.getMessage()
    assert "ValueError: out of range" in set_aside.getMessage()
    [refused] = [r for r in caplog.records if "refused a batch" in r.getMessage()]
    assert refused.exc_info is not None  # logged with its traceback


def test_polling_goes_on_after_a_refused_outcome():
    results: queue.Queue = queue.Queue()
    store = RecordingStore(refuse=frozenset({1}))
    writer = ResultWriter(results, store, batch_size=2, batch_seconds=0.01)
    writer.start()
    try:
        results.put(outcome(1))
        results.put(outcome(2))
        results.put(outcome(3))
        wait_until(lambda: sorted(store.saved_ids) == [2, 3], timeout=5)
    finally:
        writer.stop(timeout=5)
    assert writer.rejected == 1


def test_an_outage_while_saving_one_by_one_keeps_the_rest_for_later():
    results: queue.Queue = queue.Queue()
    store = RecordingStore(refuse=frozenset({1}))
    writer = ResultWriter(results, store, batch_size=3, batch_seconds=0)
    for i in range(1, 4):
        results.put(outcome(i))
    writer.collect()
    original_save = store.save
    calls = []

    def save_then_fail(outcomes):
        calls.append([o.project_id for o in outcomes])
        if len(calls) == 3:  # the batch, project 1 alone, then project 2
            store.failures_left = 1
        return original_save(outcomes)

    store.save = save_then_fail
    assert writer.flush() == 2
    # The outage hits project 2 alone; the rest is retried as one batch.
    assert calls == [[1, 2, 3], [1], [2], [2, 3]]
    assert sorted(store.saved_ids) == [2, 3]
    assert (writer.rejected, writer.failed_writes, writer.written) == (1, 1, 2)


def test_stop_gives_up_on_time_during_an_outage_and_counts_what_is_lost(caplog):
    results: queue.Queue = queue.Queue(maxsize=5)
    store = RecordingStore(failures=10**9)
    writer = ResultWriter(results, store, batch_size=3, batch_seconds=0.01)
    writer.start()
    for i in range(8):  # 3 in the failing batch, 5 fill the queue
        results.put(outcome(i), timeout=2)
    wait_until(lambda: writer.pending == 3 and results.full())

    started = time.monotonic()
    unsaved = writer.stop(timeout=2)

    assert time.monotonic() - started < 3
    assert unsaved == writer.unsaved == 8
    assert store.saved_ids == []
    assert "Stopped with 8 results unsaved" in caplog.text
    assert store.closed is True


def test_stop_gives_up_on_a_store_call_that_never_returns():
    results: queue.Queue = queue.Queue()
    release = threading.Event()

    class HangingStore(RecordingStore):
        def save(self, outcomes) -> int:
            release.wait()
            return super().save(outcomes)

    store = HangingStore()
    writer = ResultWriter(results, store, batch_size=2, batch_seconds=0.01)
    writer.start()
    for i in range(4):
        results.put(outcome(i))
    try:
        wait_until(lambda: writer.pending == 2)
        started = time.monotonic()
        assert writer.stop(timeout=1) == 4
        assert time.monotonic() - started < 2
    finally:
        release.set()


class FakeTime:
    """The writer's clock and backoff waits: each wait moves time on at
    once. `then` runs at a given time (the database returns)."""

    def __init__(self, then: dict[float, object]) -> None:
        self.now = 0.0
        self.waits: list[float] = []
        self._then = dict(then)

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += seconds
        for at in [at for at in self._then if at <= self.now]:
            self._then.pop(at)()
        return False


class ProbedStore(RecordingStore):
    """Says it is reachable once it stops failing; counts the questions."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.asked = 0

    def reachable(self) -> bool:
        self.asked += 1
        return self.failures_left == 0


def writer_on(fake: FakeTime, store, *ids: int) -> ResultWriter:
    results: queue.Queue = queue.Queue()
    for pk in ids:
        results.put(outcome(pk))
    writer = ResultWriter(
        results, store, batch_size=len(ids), clock=fake.clock, wait=fake.wait
    )
    writer.collect()
    return writer


def test_the_backoff_ends_when_the_database_is_back(monkeypatch):
    monkeypatch.setattr(writer_module, "FIRST_RETRY_SECONDS", 0.5)
    store = ProbedStore(failures=10**9)

    def database_back() -> None:
        store.failures_left = 0

    # Tries at 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s; back at 16 s, while the
    # writer waits 16 s more.
    fake = FakeTime({16.0: database_back})
    writer = writer_on(fake, store, 1)

    assert writer.flush() == 1
    assert store.saved_ids == [1]
    # Saved within one probe of its return, not at 31.5 s.
    assert fake.now <= 16.0 + writer_module.PROBE_SECONDS
    assert max(fake.waits) <= writer_module.PROBE_SECONDS


def test_a_store_that_cannot_say_whether_it_is_back_waits_out_the_backoff(
    monkeypatch,
):
    monkeypatch.setattr(writer_module, "FIRST_RETRY_SECONDS", 0.5)
    store = RecordingStore(failures=2)
    fake = FakeTime({})
    writer = writer_on(fake, store, 1)

    assert writer.flush() == 1
    assert fake.now == 0.5 + 1.0


def test_the_store_is_not_asked_when_stops_deadline_is_nearer_than_an_answer(
    monkeypatch,
):
    # Its last try is at the deadline; an answer could come after it.
    monkeypatch.setattr(writer_module, "FIRST_RETRY_SECONDS", 0.5)
    store = ProbedStore(failures=10**9)
    fake = FakeTime({})
    writer = writer_on(fake, store, 1)
    writer._stopping.set()
    writer._give_up_at = writer_module.PROBE_LIMIT_SECONDS - 0.5

    assert writer.flush() == 0
    assert store.asked == 0
    assert fake.now == writer_module.PROBE_LIMIT_SECONDS - 0.5
