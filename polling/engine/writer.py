"""The result writer: one thread that saves outcomes in batches."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from polling.engine.types import Outcome

logger = logging.getLogger(__name__)

_STOP = object()
FIRST_RETRY_SECONDS = 0.5
MAX_RETRY_SECONDS = 30.0


class ResultStore(Protocol):
    def save(self, outcomes: Sequence[Outcome]) -> int: ...

    def close(self) -> None: ...


class ResultWriter:
    """Drains the result queue into the store, in batches of up to
    `batch_size` outcomes or every `batch_seconds`, whichever comes first.

    A failed write keeps its batch and is retried with backoff, forever:
    meanwhile the result queue fills and the workers wait, so an outage
    delays results but never drops one.
    """

    def __init__(
        self,
        result_queue: queue.Queue,
        store: ResultStore,
        *,
        batch_size: int = 500,
        batch_seconds: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._queue = result_queue
        self._store = store
        self._batch_size = batch_size
        self._batch_seconds = batch_seconds
        self._clock = clock
        self._batch: list[Outcome] = []
        self._retry_now = threading.Event()
        self._thread: threading.Thread | None = None
        self.written = 0
        self.failed_writes = 0

    @property
    def pending(self) -> int:
        """Outcomes taken from the queue but not yet saved."""
        return len(self._batch)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="poller-writer")
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Save everything queued so far, then end the thread. Call it
        after the executor has stopped, so nothing arrives later."""
        self._queue.put(_STOP)
        self._retry_now.set()  # cut a backoff wait short: try once more now
        if self._thread:
            self._thread.join(timeout)

    def collect(self) -> bool:
        """Move outcomes from the queue into the batch until it is full or
        `batch_seconds` have passed since the first. Returns False once the
        stop sentinel has been seen."""
        item = self._queue.get()
        deadline = self._clock() + self._batch_seconds
        while item is not _STOP:
            self._batch.append(item)
            if len(self._batch) >= self._batch_size:
                return True
            try:
                item = self._queue.get(timeout=max(deadline - self._clock(), 0))
            except queue.Empty:
                return True
        return False

    def flush(self) -> int:
        """Save the batch, retrying until it is saved. Returns its size."""
        delay = FIRST_RETRY_SECONDS
        while self._batch:
            try:
                self._store.save(self._batch)
            except Exception as error:
                self.failed_writes += 1
                logger.warning(
                    "Could not save %d results (%s); retrying in %.1f s",
                    len(self._batch),
                    error,
                    delay,
                )
                self._retry_now.wait(delay)
                self._retry_now.clear()
                delay = min(delay * 2, MAX_RETRY_SECONDS)
                continue
            saved = len(self._batch)
            self.written += saved
            self._batch = []
            return saved
        return 0

    def _run(self) -> None:
        running = True
        try:
            while running:
                try:
                    running = self.collect()
                    self.flush()
                except Exception:
                    logger.exception("Result writer step failed; carrying on")
        finally:
            self._store.close()
