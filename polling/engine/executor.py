"""The executor: worker threads that take due Tasks and poll them, each
thread many at once."""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from polling.engine.probe import PollSteps, crashed, resume
from polling.engine.stats import PollStats
from polling.engine.transfers import Transfers
from polling.engine.transport import TransferError, Transport
from polling.engine.types import Outcome, Task

logger = logging.getLogger(__name__)

_STOP = object()  # one per worker on shutdown
_RETIRE = object()  # wakes an idle worker after scale_to() lowers the limit
PUT_RETRY_SECONDS = 0.2
# The most polls one worker thread keeps in flight. One thread drives
# them all on one CurlMulti, so a poll costs one turn of its loop instead
# of a thread's GIL hand-offs and queue locks.
POLLS_PER_THREAD = 50
# How long a busy worker waits on its sockets before it looks for new
# tasks again: the longest a task waits behind a worker whose polls are
# all waiting on slow servers.
WAIT_SECONDS = 0.01


class _Poll:
    """One poll in flight on a worker."""

    __slots__ = ("exchange", "started", "steps", "task", "transport")

    def __init__(self, task: Task, steps: PollSteps, transport: Transport) -> None:
        self.task = task
        self.steps = steps
        self.transport = transport
        self.started = time.monotonic()
        self.exchange: Any = None


class Executor:
    """Runs up to `limit` polls at once on worker threads, up to
    `polls_per_thread` each.

    A worker runs its polls together on its own Transfers (one CurlMulti)
    from `make_transfers`, which keeps their connections between polls;
    `poll(transport, task)` gives the exchanges of one poll. Outcomes go
    on the bounded result queue; when it is full the worker holds each
    outcome, in its slot, until there is room, and goes on with its other
    polls meanwhile: a slow database slows polling down instead of losing
    results, and never makes a poll in flight wait past its timeout.
    """

    def __init__(
        self,
        task_queue: queue.Queue,
        result_queue: queue.Queue,
        *,
        limit: int,
        poll: Callable[[Transport, Task], PollSteps],
        make_transfers: Callable[[], Transfers],
        on_finished: Callable[[int, Outcome | None], None],
        stats: PollStats,
        may_poll: Callable[[Task], bool] = lambda task: True,
        polls_per_thread: int = POLLS_PER_THREAD,
    ) -> None:
        self._tasks = task_queue
        self._results = result_queue
        self._limit = limit
        self._poll = poll
        self._make_transfers = make_transfers
        self._on_finished = on_finished
        self._stats = stats
        self._may_poll = may_poll
        self._polls_per_thread = polls_per_thread
        self._lock = threading.Lock()
        self._slot_freed = threading.Condition(self._lock)
        self._workers: set[threading.Thread] = set()
        self._to_retire = 0
        self._share = 0  # the most polls one worker may hold
        # Slots taken: polls in flight, and idle workers waiting for a task.
        self._claimed = 0
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

    @property
    def threads(self) -> int:
        """How many worker threads are running."""
        return len(self._workers)

    def start(self) -> None:
        """Start the workers. Raises RuntimeError, naming how far it got,
        when a thread cannot be started; the workers already started keep
        running until stop()."""
        try:
            self.scale_to(self._limit)
        except RuntimeError as error:
            raise RuntimeError(
                f"could not start worker thread {len(self._workers) + 1} of "
                f"{self._threads_for(self._limit)} ({error})"
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
            wanted = self._threads_for(limit)
            self._share = math.ceil(limit / wanted)
            self._slot_freed.notify_all()
            alive = len(self._workers) - self._to_retire
            for _ in range(wanted - alive):
                if self._to_retire:
                    self._to_retire -= 1
                else:
                    self._start_worker()
            retire = max(alive - wanted, 0)
            self._to_retire += retire
        for _ in range(retire):
            try:
                self._tasks.put_nowait(_RETIRE)
            except queue.Full:
                break  # busy workers retire once their polls are done

    def stop(self, timeout: float | None = None) -> int:
        """Drop tasks not yet started, let running polls finish, and join
        every worker, within `timeout` seconds when given. Returns how many
        queued tasks were dropped."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._stopping = True
            self._slot_freed.notify_all()
            workers = list(self._workers)
        dropped = self._drop_queued_tasks()
        for _ in workers:
            if not self._offer_stop(deadline):
                break
        for worker in workers:
            worker.join(_left(deadline))
        return dropped

    def _threads_for(self, limit: int) -> int:
        return math.ceil(limit / self._polls_per_thread)

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

    # Shared by the workers -------------------------------------------------

    def _work(self) -> None:
        try:
            _Worker(self, self._make_transfers()).run()
        finally:
            with self._lock:
                self._workers.discard(threading.current_thread())

    def _claim_or_leave(self) -> bool:
        """Wait for a free slot and take it; False when the worker asking
        should end instead (stopping, or one worker fewer wanted)."""
        with self._lock:
            while not self._stopping and not self._to_retire:
                if self._claimed < self._limit:
                    self._claimed += 1
                    return True
                self._slot_freed.wait()
            if not self._stopping:
                self._to_retire -= 1
            return False

    def _claim(self, holding: int) -> bool:
        """Take a free slot, if any, for a worker holding `holding` polls."""
        with self._lock:
            if self._stopping or holding >= self._share or self._claimed >= self._limit:
                return False
            self._claimed += 1
            return True

    def _unclaim(self, *, polled: bool = False) -> None:
        with self._lock:
            self._claimed -= 1
            if polled:
                self._in_flight -= 1
            self._slot_freed.notify()

    def _started(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _poll_ended(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _queued(self, outcome: Outcome) -> None:
        """An outcome reached the result queue: its slot is free."""
        with self._lock:
            self.results_queued += 1
            self._claimed -= 1
            self._slot_freed.notify()
        self._on_finished(outcome.project_id, outcome)


class _Worker:
    """One worker thread: its polls in flight on one Transfers, and the
    outcomes it holds while the result queue is full."""

    def __init__(self, executor: Executor, transfers: Transfers) -> None:
        self._executor = executor
        self._tasks = executor._tasks
        self._results = executor._results
        self._transfers = transfers
        self._held: list[Outcome] = []

    def run(self) -> None:
        try:
            while True:
                try:
                    if self._transfers or self._held:
                        self._keep_busy()
                    elif not self._wait_for_task():
                        return
                except Exception:
                    logger.exception("A poll worker failed; it starts afresh")
                    self._start_afresh()
        finally:
            self._abandon(self._transfers)

    def _start_afresh(self) -> None:
        """Give up the polls in flight (their projects are polled again at
        their next due time) and go on with new handles."""
        transfers, self._transfers = self._transfers, self._executor._make_transfers()
        self._abandon(transfers)

    def _abandon(self, transfers: Transfers) -> None:
        executor = self._executor
        for poll in transfers.close():
            poll.steps.close()
            executor._unclaim(polled=True)
            executor._on_finished(poll.task.target.project_id, None)

    def _wait_for_task(self) -> bool:
        """With nothing in flight: wait for a slot and a task, and start
        it. False when this worker should end."""
        if not self._executor._claim_or_leave():
            return False
        item = self._tasks.get()
        if isinstance(item, Task):
            self._start(item)
            return True
        self._executor._unclaim()
        return item is not _STOP

    def _keep_busy(self) -> None:
        """One turn with polls in flight: take the tasks there is room
        for, let libcurl work a while, move on the polls it is done with."""
        self._take_tasks()
        for poll, code, message in self._transfers.wait(WAIT_SECONDS):
            self._exchange_ended(poll, code, message)
        if self._held:
            self._hand_over(wait=0 if self._transfers else WAIT_SECONDS)

    def _take_tasks(self) -> None:
        executor = self._executor
        while executor._claim(len(self._transfers) + len(self._held)):
            try:
                item = self._tasks.get_nowait()
            except queue.Empty:
                executor._unclaim()
                return
            if not isinstance(item, Task):
                # A sentinel meant to wake an idle worker: this one is
                # busy, and reads the stopping and retiring flags itself.
                executor._unclaim()
                if item is _STOP:
                    return
                continue
            self._start(item)

    def _start(self, task: Task) -> None:
        """Start a task's poll in the slot claimed for it."""
        executor = self._executor
        if not executor._may_poll(task):
            # Queued before its shard was lost, or before a pause that
            # outlasted the lease: another poller may own it now.
            executor.disowned += 1
            executor._unclaim()
            executor._on_finished(task.target.project_id, None)
            return
        transport = self._transfers.transport()
        poll = _Poll(task, executor._poll(transport, task), transport)
        executor._started()
        self._advance(poll)

    def _exchange_ended(self, poll: _Poll, code: int, message: str) -> None:
        try:
            result, error = poll.exchange.finish(code, message), None
        except TransferError as failed:
            result, error = None, failed
        except Exception as failed:
            poll.steps.close()
            self._finish(poll, crashed(poll.task, failed))
            return
        self._advance(poll, result, error)

    def _advance(
        self, poll: _Poll, result: Any = None, error: TransferError | None = None
    ) -> None:
        """Give a poll its last exchange's result; start its next exchange,
        or finish it."""
        try:
            step = resume(poll.steps, result, error)
            if not isinstance(step, Outcome):
                poll.exchange = step
                self._transfers.add(step, poll)
                return
        except Exception as failed:  # poll() never raises; a last resort
            poll.steps.close()
            step = crashed(poll.task, failed)
        self._finish(poll, step)

    def _finish(self, poll: _Poll, outcome: Outcome) -> None:
        executor = self._executor
        self._transfers.release(poll.transport)
        executor._poll_ended()
        logger.debug(
            "Polled project %s: %s %s %s ms %s",
            outcome.project_id,
            "up" if outcome.up else "down",
            outcome.status_code,
            outcome.response_time_ms,
            outcome.error,
        )
        executor._stats.record(
            outcome, duration_seconds=time.monotonic() - poll.started
        )
        self._held.append(outcome)
        self._hand_over(wait=0)

    def _hand_over(self, *, wait: float) -> None:
        """Queue the held outcomes, oldest first, as many as there is room
        for, waiting up to `wait` seconds for room for each. A held
        outcome keeps its slot until then."""
        held = self._held
        while held:
            try:
                if wait > 0:
                    self._results.put(held[0], timeout=wait)
                else:
                    self._results.put_nowait(held[0])
            except queue.Full:
                return
            self._executor._queued(held.pop(0))


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)
