"""The bounded queue between the scheduler and the workers."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable

from polling.engine.wakeup import Doorbell

# A producer that found the queue full sleeps until this share of it is
# free again.
ROOM_SHARE = 0.25


class TaskQueue(queue.Queue):
    """A bounded queue.Queue whose producer, once it has found the queue
    full, sleeps until a quarter of it is free, instead of waking for every
    item a consumer takes.

    A saturated poller keeps its task queue full: with queue.Queue every
    task a worker took woke the waiting scheduler to put one more, a switch
    of threads per poll, each taking the interpreter lock. Waking once per
    quarter of the queue took sat-50 from 15,100-16,100 to 18,100 polls/s
    (docs/BENCHMARKS.md).

    Workers sleep in epoll, not on the queue's Condition: a worker that
    found the queue empty while it had room for more polls stays
    registered here with its doorbell (take()), and put() rings
    one such worker, the one registered last, so tasks gather on the
    workers already busy and the others stay asleep and retire. Only one
    worker is rung at a time: it takes what it has room for and rings the
    next one if tasks are left. When tasks arrive and no worker is
    registered, `on_unattended` is called (outside the lock) so the
    executor can start a worker if every one is full.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("a TaskQueue is bounded: maxsize must be at least 1")
        super().__init__(maxsize)
        self.room_wanted = max(int(maxsize * ROOM_SHARE), 1)
        # Doorbells of the workers waiting for a task, in the order they
        # came (a dict is ordered, and popitem() takes the last one).
        self._waiters: dict[Doorbell, None] = {}
        self._rung: Doorbell | None = None  # rung, and has not taken yet
        self._unattended = False
        self.on_unattended: Callable[[], None] = _nothing
        # Called by take(), with the lock held, with how long each task
        # taken waited in the queue (engine/slots.py).
        self.on_taken: Callable[[float], None] = _ignore
        self._clock = time.monotonic

    def _put(self, item) -> None:
        # Called by put() with the lock held. Each item is kept with the
        # time it came, for how long it waited.
        self.queue.append((self._clock(), item))
        if self._rung is None:
            if self._waiters:
                self._ring_next()
            else:
                self._unattended = True

    def _get(self):
        return self.queue.popleft()[1]

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        if self._unattended:
            self._unattended = False
            self.on_unattended()

    def take(
        self, room: int, doorbell: Doorbell, *, pass_on: bool
    ) -> tuple[list, bool]:
        """Up to `room` items, without blocking. A worker that empties the
        queue with room to spare stays registered, to be rung by the next
        put(). With `pass_on`, items left over are passed to the next
        registered worker. Returns the items, and whether items are left
        that no worker was rung for (the executor may need a worker more).
        """
        with self.mutex:
            self._waiters.pop(doorbell, None)
            if self._rung is doorbell:
                self._rung = None
            items = []
            if room and self._qsize():
                now, queued, on_taken = self._clock(), self.queue, self.on_taken
                for _ in range(min(room, len(queued))):
                    came, item = queued.popleft()
                    on_taken(now - came)
                    items.append(item)
            if items and self.maxsize - self._qsize() >= self.room_wanted:
                self.not_full.notify()
            unattended = False
            if not self._qsize():
                if len(items) < room:
                    self._waiters[doorbell] = None
            elif pass_on and self._rung is None:
                if self._waiters:
                    self._ring_next()
                else:
                    unattended = True
            return items, unattended

    def leave(self, doorbell: Doorbell) -> bool:
        """Stop waiting for tasks; False, still registered, when tasks are
        queued (the worker should stay and take them)."""
        with self.mutex:
            if self._qsize():
                return False
            self._waiters.pop(doorbell, None)
            if self._rung is doorbell:
                self._rung = None
            return True

    def forget(self, doorbell: Doorbell) -> None:
        """A worker ends: never ring it again. Tasks it was rung for go to
        the next registered worker."""
        with self.mutex:
            self._waiters.pop(doorbell, None)
            if self._rung is doorbell:
                self._rung = None
                if self._qsize() and self._waiters:
                    self._ring_next()

    @property
    def waiting(self) -> int:
        """Workers registered to be rung for the next task."""
        return len(self._waiters)

    def _ring_next(self) -> None:
        doorbell, _ = self._waiters.popitem()
        self._rung = doorbell
        doorbell.ring()

    def get(self, block: bool = True, timeout: float | None = None):
        # queue.Queue.get, but for which producers it wakes (the last lines).
        with self.not_empty:
            if not block:
                if not self._qsize():
                    raise queue.Empty
            elif timeout is None:
                while not self._qsize():
                    self.not_empty.wait()
            elif timeout < 0:
                raise ValueError("'timeout' must be a non-negative number")
            else:
                end = time.monotonic() + timeout
                while not self._qsize():
                    remaining = end - time.monotonic()
                    if remaining <= 0.0:
                        raise queue.Empty
                    self.not_empty.wait(remaining)
            item = self._get()
            if self.maxsize - self._qsize() >= self.room_wanted:
                self.not_full.notify()
            return item


def _nothing() -> None:
    pass


def _ignore(waited_seconds: float) -> None:
    pass
