"""The executor: worker threads that take due Tasks and poll them."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from polling.engine.stats import PollStats
from polling.engine.types import Outcome, Task

logger = logging.getLogger(__name__)


class Handle(Protocol):
    """What a worker polls with (a Transport, in the poller)."""

    def close(self) -> Any: ...


_STOP = object()  # one per worker on shutdown
_RETIRE = object()  # wakes an idle worker after scale_to() lowers the limit
PUT_RETRY_SECONDS = 0.2


class Executor:
    """Runs up to `limit` polls at once, one per worker thread.

    Each worker owns a long-lived handle from `make_handle` and keeps its
    connections between polls; `probe(handle, task)` makes one poll with
    it. Outcomes go on the
    bounded result queue; when it is full the worker waits, so a slow
    database slows polling down instead of losing results.
    """

    def __init__(
        self,
        task_queue: queue.Queue,
        result_queue: queue.Queue,
        *,
        limit: int,
        probe: Callable[[Any, Task], Outcome],
        make_handle: Callable[[], Handle],
        on_finished: Callable[[int, Outcome | None], None],
        stats: PollStats,
        may_poll: Callable[[Task], bool] = lambda task: True,
    ) -> None:
        self._tasks = task_queue
        self._results = result_queue
        self._limit = limit
        self._probe = probe
        self._make_handle = make_handle
        self._on_finished = on_finished
        self._stats = stats
        self._may_poll = may_poll
        self._lock = threading.Lock()
        self._workers: set[threading.Thread] = set()
        self._to_retire = 0
        self._in_flight = 0
        self._names = iter(range(1, 1 << 62))
        self._stopping = False
        # Outcomes handed to the result queue, and tasks let go because
        # this poller no longer owned them (see Ownership).
        self.results_queued = 0
        self.disowned = 0

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def start(self) -> None:
        """Start `limit` workers. Raises RuntimeError, naming how far it
        got, when a thread cannot be started; the workers already started
        keep running until stop()."""
        try:
            self.scale_to(self._limit)
        except RuntimeError as error:
            raise RuntimeError(
                f"could not start worker thread {len(self._workers) + 1} of "
                f"{self._limit} ({error})"
            ) from error

    def scale_to(self, limit: int) -> None:
        """Change how many polls may run at once. Running polls finish;
        queued tasks stay queued."""
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        with self._lock:
            if self._stopping:
                raise RuntimeError("cannot scale an executor that is stopping")
            self._limit = limit
            alive = len(self._workers) - self._to_retire
            for _ in range(limit - alive):
                if self._to_retire:
                    self._to_retire -= 1
                else:
                    self._start_worker()
            retire = max(alive - limit, 0)
            self._to_retire += retire
        for _ in range(retire):
            try:
                self._tasks.put_nowait(_RETIRE)
            except queue.Full:
                break  # busy workers retire after their current poll

    def stop(self, timeout: float | None = None) -> int:
        """Drop tasks not yet started, let running polls finish, and join
        every worker, within `timeout` seconds when given. Returns how many
        queued tasks were dropped."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._stopping = True
            workers = list(self._workers)
        dropped = self._drop_queued_tasks()
        for _ in workers:
            if not self._offer_stop(deadline):
                break
        for worker in workers:
            worker.join(_left(deadline))
        return dropped

    def _offer_stop(self, deadline: float | None) -> bool:
        """Queue one stop sentinel; False if the deadline passed first (the
        queue stays full while every worker is busy)."""
        while True:
            wait = PUT_RETRY_SECONDS
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return False
            try:
                self._tasks.put(_STOP, timeout=wait)
                return True
            except queue.Full:
                continue

    def _drop_queued_tasks(self) -> int:
        dropped = 0
        while True:
            try:
                item = self._tasks.get_nowait()
            except queue.Empty:
                return dropped
            if isinstance(item, Task):
                self._on_finished(item.target.project_id, None)
                dropped += 1

    def _start_worker(self) -> None:
        worker = threading.Thread(
            target=self._work, name=f"poller-worker-{next(self._names)}", daemon=True
        )
        worker.start()  # raises RuntimeError when the thread cannot start
        self._workers.add(worker)

    def _should_retire(self) -> bool:
        with self._lock:
            if self._to_retire > 0:
                self._to_retire -= 1
                self._workers.discard(threading.current_thread())
                return True
            return False

    def _work(self) -> None:
        handle = self._make_handle()
        try:
            while not self._should_retire():
                item = self._tasks.get()
                if item is _STOP:
                    break
                if item is _RETIRE:
                    continue
                self._poll(handle, item)
        finally:
            handle.close()
            with self._lock:
                self._workers.discard(threading.current_thread())

    def _poll(self, handle: Handle, task: Task) -> None:
        outcome = None
        try:
            if not self._may_poll(task):
                # Queued before its shard was lost, or before a pause that
                # outlasted the lease: another poller may own it now.
                self.disowned += 1
                return
            started = time.monotonic()
            outcome = self._probe_counted(handle, task)
            if outcome is None:
                return
            logger.debug(
                "Polled project %s: %s %s %s ms %s",
                outcome.project_id,
                "up" if outcome.up else "down",
                outcome.status_code,
                outcome.response_time_ms,
                outcome.error,
            )
            self._stats.record(outcome, duration_seconds=time.monotonic() - started)
            self._results.put(outcome)
            with self._lock:
                self.results_queued += 1
        finally:
            self._on_finished(task.target.project_id, outcome)

    def _probe_counted(self, handle: Handle, task: Task) -> Outcome | None:
        with self._lock:
            self._in_flight += 1
        try:
            return self._probe(handle, task)
        except Exception:  # probe() never raises; this keeps the worker alive
            logger.exception("Probe of project %s raised", task.target.project_id)
            return None
        finally:
            with self._lock:
                self._in_flight -= 1


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)
