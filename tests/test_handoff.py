"""The task queue between the scheduler and the workers: a bounded FIFO
whose full-queue producer is woken once a quarter of it is free."""

from __future__ import annotations

import queue
import threading

import pytest

from polling.engine.handoff import TaskQueue


def counting_wakeups(tasks: TaskQueue) -> list[int]:
    """Count the queue's calls to wake a producer waiting for room."""
    calls: list[int] = []
    notify = tasks.not_full.notify

    def counted(n: int = 1) -> None:
        calls.append(len(tasks.queue))  # the lock is held: not qsize()
        notify(n)

    tasks.not_full.notify = counted
    return calls


def test_it_hands_items_over_in_order():
    tasks = TaskQueue(3)
    for item in "abc":
        tasks.put_nowait(item)
    with pytest.raises(queue.Full):
        tasks.put_nowait("d")
    assert [tasks.get_nowait(), tasks.get(), tasks.get(timeout=1)] == list("abc")


def test_an_empty_queue_says_so():
    tasks = TaskQueue(3)
    with pytest.raises(queue.Empty):
        tasks.get_nowait()
    with pytest.raises(queue.Empty):
        tasks.get(timeout=0.01)
    with pytest.raises(ValueError, match="non-negative"):
        tasks.get(timeout=-1)


def test_it_must_be_bounded():
    with pytest.raises(ValueError, match="at least 1"):
        TaskQueue(0)


def test_a_producer_is_woken_once_a_quarter_of_the_queue_is_free():
    tasks = TaskQueue(8)
    for item in range(8):
        tasks.put_nowait(item)
    wakeups = counting_wakeups(tasks)

    tasks.get_nowait()
    assert wakeups == []  # one free slot of eight
    tasks.get_nowait()
    tasks.get_nowait()
    assert wakeups == [6, 5]  # two free, then three


def test_a_queue_of_one_wakes_its_producer_at_every_take():
    tasks = TaskQueue(1)
    tasks.put_nowait("a")
    wakeups = counting_wakeups(tasks)
    tasks.get_nowait()
    assert wakeups == [0]


def test_a_blocked_producer_gets_every_item_through():
    tasks = TaskQueue(8)
    items = list(range(200))

    def produce() -> None:
        for item in items:
            tasks.put(item)  # blocks while full; never woken means stuck

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    received = [tasks.get(timeout=5) for _ in items]
    producer.join(5)
    assert received == items
    assert not producer.is_alive()
