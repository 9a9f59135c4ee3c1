"""The result writer: one thread that saves outcomes in batches."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from polling.engine.threads import named_thread
from polling.engine.types import Outcome

logger = logging.getLogger(__name__)

_STOP = object()
FIRST_RETRY_SECONDS = 0.5
MAX_RETRY_SECONDS = 30.0
# While backing off, how often the store is asked whether it is back: a
# retry follows at most this long after the database returns.
PROBE_SECONDS = 1.0
# The longest a store's reachable() may take. It is not asked when stop()'s
# deadline is nearer: the last try at the deadline must not wait for it.
PROBE_LIMIT_SECONDS = 5.0
# How long a blocking step waits before it looks at the stop deadline again.
CHECK_SECONDS = 0.2


class StoreUnavailable(Exception):
    """The store cannot be reached now (a lost connection, a locked
    database): the same batch may well be saved later."""


class ResultStore(Protocol):
    def save(self, outcomes: Sequence[Outcome]) -> int:
        """Save the outcomes in one transaction, all or none. Raises
        StoreUnavailable when the store cannot be reached; any other
        exception means it refused the data."""

    def close(self) -> None:
        """Release what the writer thread holds (its connection)."""

    # Optional: open(), called by ResultWriter.start() before its thread
    # starts, prepares what the first save() would otherwise prepare (a
    # child process: polling/writer_process.py).

    def reachable(self) -> bool:
        """Whether the store answers now: a cheap question, asked while
        backing off so that the retry need not wait out the backoff. It
        returns within PROBE_LIMIT_SECONDS, and False when unsure."""


class ResultWriter:
    """Drains the result queue into the store, in batches of up to
    `batch_size` outcomes or every `batch_seconds`, whichever comes first.
    `on_saved` hears of every batch once it is saved.

    While the store is unavailable the batch is kept and retried with
    backoff: the result queue fills and the workers wait, so an outage
    delays results but never drops one. The backoff ends early when the
    store, asked every PROBE_SECONDS, says it is reachable again. A batch
    the store refuses for its data is saved one outcome at a time, so one
    bad outcome is set aside (logged and counted as rejected) and the rest
    are kept.
    """

    def __init__(
        self,
        result_queue: queue.Queue,
        store: ResultStore,
        *,
        batch_size: int = 500,
        batch_seconds: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        on_saved: Callable[[Sequence[Outcome]], None] | None = None,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self._queue = result_queue
        self._store = store
        self._on_saved = on_saved
        self._batch_size = batch_size
        self._batch_seconds = batch_seconds
        self._clock = clock
        self._batch: list[Outcome] = []
        self._retry_now = threading.Event()
        # Waits up to its seconds; True when woken early (tests inject one).
        self._wait = wait or self._retry_now.wait
        self._stopping = threading.Event()
        self._give_up_at: float | None = None
        self._abandon_lock = threading.Lock()
        self._abandoned = False
        self._thread: threading.Thread | None = None
        self.written = 0
        self.failed_writes = 0
        self.rejected = 0
        self.unsaved = 0

    @property
    def settled(self) -> int:
        """Outcomes done with: saved (or dropped by the store) or set aside."""
        return self.written + self.rejected

    @property
    def pending(self) -> int:
        """Outcomes taken from the queue but not yet saved."""
        return len(self._batch)

    def start(self) -> None:
        opener = getattr(self._store, "open", None)
        if opener is not None:
            opener()
        # A daemon, so a store call that never returns cannot keep the
        # process alive past stop(); stop() counts what it could not save.
        self._thread = named_thread(self._run, name="poller-writer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> int:
        """Save everything queued so far, then end the thread. Call it after
        the executor has stopped, so nothing arrives later.

        With a timeout, gives up once it has passed: the results still
        unsaved (the store is down, or a call into it hangs) are logged and
        counted. Returns that count.
        """
        if timeout is not None:
            self._give_up_at = self._clock() + timeout
        self._stopping.set()
        self._retry_now.set()  # cut a backoff wait short: try once more now
        self._offer(_STOP)
        if self._thread:
            # A little grace past the deadline: the thread's last attempt
            # ends there and it then counts what is left itself.
            left = self._time_left()
            self._thread.join(None if left is None else left + CHECK_SECONDS)
            if self._thread.is_alive():
                self._abandon("the store did not answer in time")
        return self.unsaved

    def collect(self) -> bool:
        """Move outcomes from the queue into the batch until it is full or
        `batch_seconds` have passed since the first. Returns False once the
        stop sentinel has been seen, or stop()'s deadline has passed."""
        deadline = None
        while True:
            timeout = None if deadline is None else max(deadline - self._clock(), 0)
            item = self._get(timeout)
            if item is _STOP:
                return False
            if item is None:
                if self._past_deadline():
                    return False
                if deadline is not None and self._clock() >= deadline:
                    return True
                continue
            self._batch.append(item)
            if len(self._batch) >= self._batch_size:
                return True
            if deadline is None:
                deadline = self._clock() + self._batch_seconds

    def flush(self) -> int:
        """Save the batch: retried while the store is unavailable, one
        outcome at a time when it refuses the batch. Returns how many were
        saved; 0 when stop()'s deadline passed first."""
        delay = FIRST_RETRY_SECONDS
        saved = 0
        while self._batch:
            try:
                saved += self._save_batch()
            except StoreUnavailable as error:
                self.failed_writes += 1
                if self._past_deadline():
                    return saved
                logger.warning(
                    "Could not save %d results (%s); retrying in %.1f s",
                    len(self._batch),
                    error,
                    delay,
                )
                self._back_off(_shorter(delay, self._time_left()))
                delay = min(delay * 2, MAX_RETRY_SECONDS)
        return saved

    def _back_off(self, seconds: float) -> None:
        """Wait up to `seconds` before the next try: less when stop() asks
        for it, or when the store is reachable again."""
        until = self._clock() + seconds
        while (left := until - self._clock()) > 0:
            if self._wait(min(PROBE_SECONDS, left)) or self._reachable():
                break
        self._retry_now.clear()

    def _reachable(self) -> bool:
        reachable = getattr(self._store, "reachable", None)
        if reachable is None:  # a store that cannot tell waits out the backoff
            return False
        left = self._time_left()
        if left is not None and left < PROBE_LIMIT_SECONDS:
            return False
        try:
            return reachable()
        except Exception:
            logger.exception("Asking whether the store is reachable failed")
            return False

    def _save_batch(self) -> int:
        size = len(self._batch)
        try:
            self._store.save(self._batch)
        except StoreUnavailable:
            raise
        except Exception:
            logger.exception(
                "The store refused a batch of %d results; saving them one by one",
                size,
            )
            return self._save_one_by_one()
        saved = self._batch[:size]
        self._done(size)
        self._tell(saved)
        return size

    def _save_one_by_one(self) -> int:
        """Save each outcome alone; set aside the ones the store refuses.
        StoreUnavailable leaves the rest in the batch for the next try."""
        saved = 0
        while self._batch:
            outcome = self._batch[0]
            try:
                self._store.save([outcome])
            except StoreUnavailable:
                raise
            except Exception as error:
                self.rejected += 1
                logger.error(
                    "Set aside the result of project %s polled at %s: %s: %s",
                    outcome.project_id,
                    outcome.started_at.isoformat(),
                    type(error).__name__,
                    error,
                )
                self._batch.pop(0)
            else:
                saved += 1
                self._done(1)
                self._tell([outcome])
        return saved

    def _tell(self, outcomes: Sequence[Outcome]) -> None:
        """Pass saved outcomes to on_saved, outside the store's transaction;
        its failure is logged and never costs a result."""
        if self._on_saved is None:
            return
        try:
            self._on_saved(outcomes)
        except Exception:
            logger.exception("on_saved failed after %d results", len(outcomes))

    def _done(self, count: int) -> None:
        with self._abandon_lock:
            if self._abandoned:
                # stop() gave up while this batch was in the store, counted
                # it as unsaved and moved on; it was saved after all.
                self.unsaved -= count
                logger.warning("Saved %d results after stop() gave up", count)
            else:
                del self._batch[:count]
            self.written += count

    def _run(self) -> None:
        running = True
        try:
            while running and not self._past_deadline():
                try:
                    running = self.collect()
                    self.flush()
                except Exception:
                    logger.exception("Result writer step failed; carrying on")
            if self._batch or self._past_deadline():
                self._abandon("the store was unavailable")
        finally:
            self._store.close()

    # Stopping on time

    def _past_deadline(self) -> bool:
        return (
            self._stopping.is_set()
            and self._give_up_at is not None
            and self._clock() >= self._give_up_at
        )

    def _time_left(self) -> float | None:
        if self._give_up_at is None:
            return None
        return max(self._give_up_at - self._clock(), 0.0)

    def _offer(self, item: object) -> None:
        """Put on the queue, waiting no longer than stop()'s deadline: a
        full queue during an outage must not hang stop()."""
        while True:
            try:
                self._queue.put(item, timeout=CHECK_SECONDS)
                return
            except queue.Full:
                if self._past_deadline():
                    return

    def _get(self, timeout: float | None) -> object | None:
        """The next queued item, or None after `timeout` (or a check of
        the stop deadline) with nothing queued."""
        wait = CHECK_SECONDS if timeout is None else min(timeout, CHECK_SECONDS)
        try:
            return self._queue.get(timeout=wait)
        except queue.Empty:
            return None

    def _abandon(self, why: str) -> None:
        """Count and log what is left unsaved at a stop that ran out of
        time. Counts once, whether stop() or the writer thread gets here."""
        with self._abandon_lock:
            if self._abandoned:
                return
            self._abandoned = True
            left = len(self._batch) + _drain(self._queue)
            self._batch = []
        if left:
            self.unsaved += left
            logger.error(
                "Stopped with %d results unsaved: %s. They are lost.", left, why
            )


def _shorter(seconds: float, limit: float | None) -> float:
    return seconds if limit is None else min(seconds, limit)


def _drain(results: queue.Queue) -> int:
    count = 0
    while True:
        try:
            item = results.get_nowait()
        except queue.Empty:
            return count
        if item is not _STOP:
            count += 1
