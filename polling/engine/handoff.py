"""The bounded queue between the scheduler and the workers."""

from __future__ import annotations

import queue
import time

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
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("a TaskQueue is bounded: maxsize must be at least 1")
        super().__init__(maxsize)
        self.room_wanted = max(int(maxsize * ROOM_SHARE), 1)

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
