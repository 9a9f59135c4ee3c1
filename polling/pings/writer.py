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

A verdict reaches a waiting thread through its concurrent future, and the
requests waiting on an event loop all at once: one callback per loop and
batch, not one wake-up of the loop per ping.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Sequence

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


class Handover:
    """A ping handed to the writer, and where its verdict goes: a
    concurrent future (a thread waits), or an asyncio future of `loop`."""

    __slots__ = ("future", "loop", "ping", "taken", "withdrawn")

    def __init__(self, ping: Ping, future, loop=None) -> None:
        self.ping, self.future, self.loop = ping, future, loop
        self.taken = self.withdrawn = False


class PingWriter:
    def __init__(
        self, save: Saver, *, queue_size: int, close: Callable | None = None
    ) -> None:
        self._save = save
        self._close = close
        self._queue_size = queue_size
        self._waiting: deque[Handover] = deque()
        self._changed = threading.Condition()
        self._stopping = False
        self._committing = 0  # pings in the batch being stored
        self._idle = False  # waiting for a first ping
        # A daemon, so that it never holds an exiting process; atexit stops
        # the shared one first (after the threads that are not daemons).
        self._thread = threading.Thread(
            target=self._run, name="ping-writer", daemon=True
        )
        self._thread.start()

    def submit(self, ping: Ping) -> concurrent.futures.Future:
        """A future of the ping's verdict, for a thread. Raises Overloaded."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.hand_over(Handover(ping, future))
        return future

    def hand_over(self, handover: Handover) -> None:
        """Raises Overloaded: too many pings wait, or the writer stops."""
        with self._changed:
            if self._stopping or len(self._waiting) >= self._queue_size:
                raise Overloaded
            self._waiting.append(handover)
            if self._idle:  # else it looks at the queue after its batch
                self._changed.notify()

    def withdraw(self, handover: Handover) -> bool:
        """Take back a ping not yet in a batch; False once it is in one
        (its verdict will come)."""
        with self._changed:
            if handover.taken:
                return False
            handover.withdrawn = True
            return True

    def alive(self) -> bool:
        return self._thread.is_alive()

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

    def _next_batch(self) -> list[Handover] | None:
        """The pings waiting (none when all were withdrawn), or None once
        stopping with nothing left."""
        with self._changed:
            self._idle = True
            while not self._waiting and not self._stopping:
                self._changed.wait()
            self._idle = False
            if not self._waiting:
                return None
            batch = []
            while self._waiting and len(batch) < BATCH_SIZE:
                handover = self._waiting.popleft()
                if not handover.withdrawn:
                    handover.taken = True
                    batch.append(handover)
            self._committing = len(batch)
            return batch

    def _commit(self, batch: list[Handover]) -> None:
        try:
            verdicts = self._save([handover.ping for handover in batch])
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
        deliver(batch, verdicts)


def deliver(batch: list[Handover], verdicts: list[Verdict]) -> None:
    on_loops: dict[asyncio.AbstractEventLoop, list] = defaultdict(list)
    for handover, verdict in zip(batch, verdicts, strict=True):
        if handover.loop is None:
            handover.future.set_result(verdict)
        else:
            on_loops[handover.loop].append((handover.future, verdict))
    for loop, results in on_loops.items():
        # RuntimeError: the loop has closed; nobody waits for these answers.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_set_results, results)


def _set_results(results: list) -> None:
    for future, verdict in results:
        if not future.done():
            future.set_result(verdict)
