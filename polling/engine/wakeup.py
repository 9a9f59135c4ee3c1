"""A doorbell: a file descriptor another thread makes readable to wake a
worker that sleeps in epoll on its sockets.

A worker whose polls all wait on the network, or that has none, sleeps
in one epoll wait until a socket is ready, libcurl's next deadline comes,
or a task arrives; the task queue rings the doorbell of a sleeping worker
when it hands it a task. A Condition cannot be waited on together with
sockets, which is why the workers used to look at the queue every 10 ms
instead (docs/polling.md, "Idle slots are free").
"""

from __future__ import annotations

import contextlib
import os
import threading


class Doorbell:
    """An eventfd: ring() makes it readable until clear(). Rings before a
    clear() add up to one wake-up."""

    def __init__(self) -> None:
        self._fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        # ring() and close() may race (the executor rings every worker on
        # stop): never write to a number the system has given out again.
        self._closing = threading.Lock()
        self.rings = 0  # ring() calls: the wake-ups others asked for

    def fileno(self) -> int:
        return self._fd

    def ring(self) -> None:
        with self._closing:
            if self._fd < 0:
                return
            self.rings += 1
            os.eventfd_write(self._fd, 1)

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError):  # not rung since the last clear
            os.eventfd_read(self._fd)

    def close(self) -> None:
        with self._closing:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
