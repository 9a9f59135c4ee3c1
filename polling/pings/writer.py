"""The ping writer: one thread per web process that stores pings in
batches (a group commit), and the requests that wait for it.

A request hands its ping over and waits; the thread takes every ping
waiting when it is free (up to BATCH_SIZE), stores them in one
transaction (batch.py) and then answers each one's request. Under a light
load a batch is one ping and the wait one transaction; under a herd the
pings that arrive while a batch commits make the next batch, so the
database sees a few large transactions a second rather than thousands of
small ones. No ping waits for a timer.

A ping is answered 200 only once its batch has committed. Nothing
accepted is dropped: when PING_QUEUE_SIZE pings already wait, a new one
is refused at once (503), and a ping not taken into a batch within
PING_QUEUE_SECONDS is withdrawn and refused (503); either way it was not
stored, and the client sends it again after Retry-After. A ping already
in a batch is waited for however long the batch takes. stop() stores
every ping accepted before it returns (the web process calls it as it
shuts down, after its last request).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence

from django.conf import settings

from polling.engine.writer import StoreUnavailable
from polling.pings.answers import Verdict
from polling.pings.rules import Ping
from polling.store import release_connection

logger = logging.getLogger(__name__)

# As many as the poller's writer takes: past a few hundred rows a batch,
# a larger one saves the database little and makes its pings wait longer.
BATCH_SIZE = 500
Saver = Callable[[Sequence[Ping]], list[Verdict]]


class Overloaded(Exception):
    """The ping was not accepted: too many wait already, or the writer is
    stopping."""


class PingWriter:
    def __init__(
        self, save: Saver, *, queue_size: int, close: Callable | None = None
    ) -> None:
        self._save = save
        self._close = close
        self._queue_size = queue_size
        self._waiting: deque[tuple[Ping, concurrent.futures.Future]] = deque()
        self._changed = threading.Condition()
        self._stopping = False
        self._committing = 0  # pings in the batch being stored
        # A daemon, so that it never holds an exiting process; atexit stops
        # the shared one first (after the threads that are not daemons).
        self._thread = threading.Thread(
            target=self._run, name="ping-writer", daemon=True
        )
        self._thread.start()

    def submit(self, ping: Ping) -> concurrent.futures.Future:
        """A future of the ping's verdict. Raises Overloaded."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._changed:
            if self._stopping or len(self._waiting) >= self._queue_size:
                raise Overloaded
            self._waiting.append((ping, future))
            self._changed.notify()
        return future

    @property
    def stopping(self) -> bool:
        return self._stopping

    def busy(self) -> bool:
        """Whether a batch is being stored now."""
        with self._changed:
            return self._committing > 0

    def stop(self) -> None:
        """Store every ping accepted so far, then end the thread."""
        with self._changed:
            self._stopping = True
            self._changed.notify()
        self._thread.join()

    def _run(self) -> None:
        try:
            while (batch := self._next_batch()) is not None:
                if batch:
                    self._commit(batch)
        finally:
            if self._close is not None:
                self._close()

    def _next_batch(self) -> list | None:
        """The pings waiting (none when all were withdrawn), or None once
        stopping with nothing left."""
        with self._changed:
            while not self._waiting and not self._stopping:
                self._changed.wait()
            if not self._waiting:
                return None
            batch = []
            while self._waiting and len(batch) < BATCH_SIZE:
                ping, future = self._waiting.popleft()
                # False: its request withdrew it (waited too long).
                if future.set_running_or_notify_cancel():
                    batch.append((ping, future))
            self._committing = len(batch)
            return batch

    def _commit(self, batch: list) -> None:
        try:
            verdicts = self._save([ping for ping, _ in batch])
        except StoreUnavailable as error:
            logger.warning("Could not store %d pings: %s", len(batch), error)
            verdicts = [Verdict.UNAVAILABLE] * len(batch)
        except Exception:
            # Rolled back: nothing of the batch is stored, and its clients
            # are told so.
            logger.exception("Could not store %d pings", len(batch))
            verdicts = [Verdict.UNAVAILABLE] * len(batch)
        finally:
            release_connection()
        with self._changed:
            self._committing = 0
        for (_, future), verdict in zip(batch, verdicts, strict=True):
            future.set_result(verdict)


# The web process's writer -------------------------------------------------------

_writer: PingWriter | None = None
_writer_pid = 0
_writer_lock = threading.Lock()


def shared_writer() -> PingWriter:
    """This process's writer, started on first use (in each web worker,
    after the fork)."""
    global _writer, _writer_pid
    with _writer_lock:
        if _writer is None or _writer_pid != os.getpid():
            from polling.pings.batch import PingStore

            store = PingStore()
            _writer = PingWriter(
                store.save, queue_size=settings.PING_QUEUE_SIZE, close=store.close
            )
            _writer_pid = os.getpid()
        return _writer


atexit.register(lambda: stop_shared_writer())


def stop_shared_writer() -> None:
    """Store every accepted ping; the next ping starts a new writer."""
    global _writer
    with _writer_lock:
        writer, _writer = _writer, None
    if writer is not None and _writer_pid == os.getpid():
        writer.stop()


def record(ping: Ping) -> Verdict:
    """Hand the ping to the writer and wait for its verdict (a thread)."""
    try:
        future = shared_writer().submit(ping)
    except Overloaded:
        return Verdict.OVERLOADED
    try:
        return future.result(timeout=settings.PING_QUEUE_SECONDS)
    except concurrent.futures.TimeoutError:
        if future.cancel():
            return Verdict.OVERLOADED
        return future.result()  # in a batch already: its answer is the truth


async def record_async(ping: Ping) -> Verdict:
    """record() for a coroutine on an event loop."""
    try:
        future = shared_writer().submit(ping)
    except Overloaded:
        return Verdict.OVERLOADED
    waiting = asyncio.wrap_future(future)
    try:
        return await asyncio.wait_for(
            asyncio.shield(waiting), settings.PING_QUEUE_SECONDS
        )
    except TimeoutError:
        if future.cancel():
            return Verdict.OVERLOADED
        return await waiting
