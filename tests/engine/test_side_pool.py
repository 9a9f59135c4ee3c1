"""The side pool: checks through a blocking driver run within their own
limit, and one that never returns is given up at its deadline."""

from __future__ import annotations

import queue
import threading
from datetime import UTC, datetime

import pytest

from polling.engine.side_pool import SidePool
from polling.engine.stats import PollStats
from polling.engine.types import Outcome, Target, Task
from tests.support.waiting import wait_until


class Driver:
    """A blocking check: each call waits for `release`, then is up."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, task: Task) -> Outcome:
        with self._lock:
            self.calls += 1
        self.release.wait()
        return Outcome(
            project_id=task.target.project_id,
            up=True,
            started_at=datetime.now(UTC),
            due_at=task.due_at,
        )


@pytest.fixture
def pool():
    made = []

    def make(driver, *, limit=2, results=None, **options) -> SidePool:
        side = SidePool(
            results if results is not None else queue.Queue(),
            limit=limit,
            takes=lambda task: task.target.url.startswith("postgres://"),
            check=driver,
            on_finished=lambda project_id, outcome: None,
            stats=PollStats(),
            grace=0.0,
            **options,
        )
        side.start()
        made.append((side, driver))
        return side

    yield make
    for side, driver in made:
        driver.release.set()
        side.stop(10)


def task(project_id: int, *, timeout: float = 60) -> Task:
    target = Target(
        project_id=project_id,
        url=f"postgres://127.0.0.1/db{project_id}",
        timeout_seconds=timeout,
    )
    return Task(target=target, due_at=datetime.now(UTC))


def test_it_takes_only_the_tasks_of_its_kinds(pool):
    side = pool(Driver())
    other = Task(
        target=Target(project_id=9, url="https://example.com/"),
        due_at=datetime.now(UTC),
    )

    assert side.offer(task(1))
    assert not side.offer(other)


def test_no_more_checks_run_at_once_than_its_limit(pool):
    driver = Driver()
    results: queue.Queue = queue.Queue()
    side = pool(driver, limit=2, results=results)
    for project_id in range(5):
        side.offer(task(project_id))

    wait_until(lambda: side.running == 2 and side.waiting == 3)
    assert driver.calls == 2
    driver.release.set()

    outcomes = [results.get(timeout=10) for _ in range(5)]
    assert sorted(o.project_id for o in outcomes) == [0, 1, 2, 3, 4]
    assert all(o.up for o in outcomes)
    # Counted with the executor's, for settle() before a shard hand-over.
    assert side.results_queued == 5


def test_a_driver_that_never_returns_is_given_up_at_its_deadline(pool):
    driver = Driver()
    results: queue.Queue = queue.Queue()
    side = pool(driver, limit=1, results=results)

    side.offer(task(1, timeout=0.2))
    given_up = results.get(timeout=10)

    assert not given_up.up
    assert given_up.error == "timed out after 0.2 s"
    assert side.hung == 1
    assert side.timed_out == 1
    assert side.running == 0  # the slot is free for the next check
    side.offer(task(2, timeout=0.2))
    assert results.get(timeout=10).project_id == 2
    assert side.hung == 2

    driver.release.set()  # the hung drivers return at last
    wait_until(lambda: side.hung == 0)
    assert results.empty()  # what they returned is dropped: one poll, one outcome


def test_while_too_many_drivers_hang_new_checks_fail_unstarted(pool):
    driver = Driver()
    results: queue.Queue = queue.Queue()
    side = pool(driver, limit=1, results=results, max_hung=1)
    side.offer(task(1, timeout=0.1))
    results.get(timeout=10)

    side.offer(task(2, timeout=0.1))
    refused = results.get(timeout=10)

    assert refused.error == (
        "not checked: 1 earlier checks still hang (their drivers never returned)"
    )
    assert driver.calls == 1
    assert side.refused == 1


def test_an_outcome_waits_for_room_in_the_result_queue_holding_its_slot(pool):
    driver = Driver()
    driver.release.set()
    results: queue.Queue = queue.Queue(1)
    results.put("full")
    side = pool(driver, limit=1, results=results)
    side.offer(task(1))
    side.offer(task(2))

    wait_until(lambda: driver.calls == 1 and side.waiting == 1)
    assert results.get() == "full"
    assert results.get(timeout=10).project_id == 1
    assert results.get(timeout=10).project_id == 2


def test_stop_drops_the_checks_not_started(pool):
    driver = Driver()
    side = pool(driver, limit=1)
    for project_id in range(3):
        side.offer(task(project_id, timeout=0.5))
    wait_until(lambda: side.running == 1 and side.waiting == 2)

    assert side.stop(10) == 2
