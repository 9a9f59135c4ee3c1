"""The executor: worker threads that take due Tasks and poll them, each
thread many at once."""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from polling.engine.handoff import TaskQueue
from polling.engine.probe import PollSteps, crashed, resume
from polling.engine.slots import SlotReport, SlotUsage
from polling.engine.stats import PollStats
from polling.engine.threads import named_thread
from polling.engine.transfers import Transfers
from polling.engine.transport import TransferError, Transport
from polling.engine.types import Outcome, Task
from polling.engine.wakeup import Doorbell

logger = logging.getLogger(__name__)

# The most polls one worker thread keeps in flight. One thread drives
# them all on one CurlMulti, so a poll costs one turn of its loop instead
# of a thread's GIL hand-offs and queue locks.
POLLS_PER_THREAD = 50
# The most worker threads, whatever the limit; past it each worker holds
# a larger share of the limit instead. Threads beyond the cores only add
# contenders for the interpreter lock and the executor's: at 300,000
# projects at 60 s on 2 cores, 1,000 slots in 20 workers made 3,195
# polls/s of 5,000 at 372 µs of CPU each; in 2 workers (or 4) every poll
# was made, at 172 µs (docs/polling.md, "Idle slots are free").
MAX_WORKER_THREADS = max(2, min(len(os.sched_getaffinity(0)), 4))
# A worker with nothing to do for this long ends (one is always kept):
# threads are started when the polls in flight need them, not for every
# slot the limit allows.
IDLE_RETIRE_SECONDS = 30.0
# After a worker thread could not be started, how long to go on with the
# others before trying again.
GROW_RETRY_SECONDS = 10.0
# How often a worker holding outcomes (the result queue full: the
# database is slow) tries to queue them again.
HELD_RETRY_SECONDS = 0.05


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
    """Runs up to `limit` polls at once on at most `max_threads` worker
    threads, each holding up to `polls_per_thread` polls, or the limit's
    share when the limit needs more than `max_threads` such threads.

    A worker runs its polls together on its own Transfers (one CurlMulti)
    from `make_transfers`, which keeps their connections between polls;
    `poll(transport, task)` gives the exchanges of one poll. Outcomes go
    on the bounded result queue; when it is full the worker holds each
    outcome, in its slot, until there is room, and goes on with its other
    polls meanwhile: a slow database slows polling down instead of losing
    results, and never makes a poll in flight wait past its timeout.

    Slots not in use cost nothing: a worker sleeps in one epoll wait until
    a socket is ready, libcurl's next deadline, or the task queue rings its
    doorbell (handoff.py); one worker runs at first, another starts only
    when every running one is full, and one idle for `idle_retire_seconds`
    ends. The limit is only a ceiling.
    """

    def __init__(
        self,
        task_queue: TaskQueue,
        result_queue: queue.Queue,
        *,
        limit: int,
        poll: Callable[[Transport, Task], PollSteps],
        make_transfers: Callable[[], Transfers],
        on_finished: Callable[[int, Outcome | None], None],
        stats: PollStats,
        may_poll: Callable[[Task], bool] = lambda task: True,
        divert: Callable[[Task], bool] = lambda task: False,
        polls_per_thread: int = POLLS_PER_THREAD,
        max_threads: int = MAX_WORKER_THREADS,
        idle_retire_seconds: float = IDLE_RETIRE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_threads < 1:
            raise ValueError("an executor needs at least one worker thread")
        if not isinstance(task_queue, TaskQueue):
            raise TypeError("the executor's task queue must be a handoff.TaskQueue")
        self._tasks = task_queue
        self._results = result_queue
        self._limit = limit
        self._poll = poll
        self._make_transfers = make_transfers
        self._on_finished = on_finished
        self._stats = stats
        self._may_poll = may_poll
        # Takes the tasks of another pool (the side pool's, for checks that
        # need a blocking driver): True when it took the task.
        self._divert = divert
        self._polls_per_thread = polls_per_thread
        self._thread_ceiling = max_threads
        self._idle_retire_seconds = idle_retire_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._workers: dict[threading.Thread, _Worker] = {}
        self._share = self._share_of(limit)  # the most polls one worker holds
        # Slots taken: polls in flight, and outcomes held for the result queue.
        self._claimed = 0
        self._in_flight = 0
        self._names = iter(range(1, 1 << 62))
        self._stopping = False
        self._ended_turns = 0  # of workers that have ended
        self._ended_rings = 0
        self._started_threads = 0
        self._grow_again_at = -math.inf
        # Outcomes handed to the result queue, and tasks let go because
        # this poller no longer owned them (see Ownership).
        self.results_queued = 0
        self.disowned = 0
        # Whether the limit, not the targets, delays polls (slots.py).
        self._slots = SlotUsage(clock=clock)
        task_queue.on_unattended = self._grow_if_full
        task_queue.on_taken = self._slots.taken

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

    @property
    def threads_started(self) -> int:
        """Worker threads started so far, the first one included."""
        return self._started_threads

    @property
    def turns(self) -> int:
        """Turns of the workers' loops so far: each is one wait on their
        sockets and doorbell, and what woke it."""
        with self._lock:
            workers = list(self._workers.values())
        return self._ended_turns + sum(worker.turns for worker in workers)

    @property
    def doorbell_rings(self) -> int:
        """Times a worker was woken because a task arrived for it."""
        with self._lock:
            workers = list(self._workers.values())
        return self._ended_rings + sum(worker.doorbell.rings for worker in workers)

    def slot_report(self) -> SlotReport:
        """How busy the slots were over the last minute."""
        with self._lock:
            return self._slots.report()

    def start(self) -> None:
        """Start the first worker; more start as the polls in flight need
        them. Raises RuntimeError when the thread cannot be started."""
        with self._lock:
            try:
                self._start_worker()
            except RuntimeError as error:
                message = f"could not start worker thread 1 ({error})"
                raise RuntimeError(message) from error

    def scale_to(self, limit: int) -> None:
        """Change how many polls may run at once. Running polls finish;
        queued tasks stay queued."""
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        with self._lock:
            if self._stopping:
                raise RuntimeError("cannot scale an executor that is stopping")
            self._limit = limit
            self._share = self._share_of(limit)
            self._slots.all_busy(self._claimed >= limit)
        # Workers look again: at room they now have, or at whether they
        # are one too many.
        self._ring_all()
        self._grow_if_full()

    def stop(self, timeout: float | None = None) -> int:
        """Drop tasks not yet started, let running polls finish, and join
        every worker, within `timeout` seconds when given. Returns how many
        queued tasks were dropped."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._stopping = True
            workers = list(self._workers)
        dropped = self._drop_queued_tasks()
        self._ring_all()
        for worker in workers:
            worker.join(_left(deadline))
        return dropped + self._drop_queued_tasks()

    def _share_of(self, limit: int) -> int:
        """The most polls one worker holds under `limit`: polls_per_thread,
        or more where the thread ceiling would leave slots unused."""
        return max(
            min(self._polls_per_thread, limit),
            math.ceil(limit / self._thread_ceiling),
        )

    def _max_threads(self) -> int:
        return math.ceil(self._limit / self._share)

    def _ring_all(self) -> None:
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.doorbell.ring()

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

    def _grow_if_full(self) -> None:
        """Tasks are queued and no worker was woken for them: start one more
        worker if every running one is full and the limit allows it."""
        if len(self._workers) >= self._max_threads():
            return  # read without the lock: the common case, and cheap
        with self._lock:
            if (
                self._stopping
                or len(self._workers) >= self._max_threads()
                or self._claimed >= self._limit
                or self._claimed < len(self._workers) * self._share
            ):
                return  # a worker with room will take them on its next turn
            if self._clock() < self._grow_again_at:
                return
            try:
                self._start_worker()
            except RuntimeError as error:
                # Out of threads or memory: go on with the workers there
                # are, and try again a while later rather than at every task.
                self._grow_again_at = self._clock() + GROW_RETRY_SECONDS
                logger.warning(
                    "Could not start poll worker %d (%s); going on with %d",
                    len(self._workers) + 1,
                    error,
                    len(self._workers),
                )

    def _start_worker(self) -> None:
        """Start a worker thread. Caller holds the lock."""
        thread = named_thread(
            self._work, name=f"poller-worker-{next(self._names)}", daemon=True
        )
        self._workers[thread] = _Worker(self)
        try:
            thread.start()  # raises RuntimeError when the thread cannot start
        except RuntimeError:
            del self._workers[thread]
            raise
        self._started_threads += 1

    # Shared by the workers -------------------------------------------------

    def _work(self) -> None:
        worker = self._workers[threading.current_thread()]
        try:
            worker.run()
        finally:
            with self._lock:
                self._workers.pop(threading.current_thread(), None)
                if not worker.counted:
                    self._ended_turns += worker.turns
                    self._ended_rings += worker.doorbell.rings
                    worker.counted = True
            self._tasks.forget(worker.doorbell)
            worker.doorbell.close()

    def _take(self, worker: _Worker, holding: int) -> tuple[list, bool]:
        """The tasks a worker holding `holding` polls has room for, claimed;
        registers it to be rung for the next task while it has room left.
        Returns the tasks, and whether tasks were left unattended."""
        with self._lock:
            if self._stopping:
                return self._tasks.take(0, worker.doorbell, pass_on=False)
            free = self._limit - self._claimed
            room = max(min(self._share - holding, free), 0)
            # Tasks this worker has no room for go to another worker only
            # while slots are free: with every slot taken, the worker that
            # frees one takes the next task itself, and ringing the others
            # would only wake workers that cannot take it.
            items, unattended = self._tasks.take(
                room, worker.doorbell, pass_on=free > room
            )
            self._claimed += len(items)
            if items and self._claimed >= self._limit:
                self._slots.all_busy(True)
            return items, unattended

    def _may_end(self, worker: _Worker, idle_since: float) -> bool:
        """Whether a worker with nothing in flight should end: stopping,
        one worker too many for the limit, or idle long enough and not the
        last one."""
        with self._lock:
            if not self._stopping:
                surplus = len(self._workers) > self._max_threads()
                rested = self._clock() - idle_since >= self._idle_retire_seconds
                if not (surplus or (rested and len(self._workers) > 1)):
                    return False
                if not self._tasks.leave(worker.doorbell):
                    return False
            # Leaving the set now, so that two idle workers cannot both
            # see the other one as the one that stays.
            self._workers.pop(threading.current_thread(), None)
            self._ended_turns += worker.turns
            self._ended_rings += worker.doorbell.rings
            worker.counted = True
            return True

    def _unclaim(self, *, polled: bool = False) -> None:
        with self._lock:
            self._free_slot()
            if polled:
                self._in_flight -= 1

    def _free_slot(self) -> None:
        """Caller holds the lock."""
        if self._claimed == self._limit:
            self._slots.all_busy(False)
        self._claimed -= 1

    def _started(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _poll_ended(self, seconds: float) -> None:
        with self._lock:
            self._in_flight -= 1
            self._slots.ended(seconds)

    def _queued(self, outcome: Outcome) -> None:
        """An outcome reached the result queue: its slot is free."""
        with self._lock:
            self.results_queued += 1
            self._free_slot()
        self._on_finished(outcome.project_id, outcome)


class _Worker:
    """One worker thread: its polls in flight on one Transfers, and the
    outcomes it holds while the result queue is full."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self._results = executor._results
        self._transfers: Transfers | None = None
        self._held: list[Outcome] = []
        self.doorbell = Doorbell()
        self.turns = 0
        self.counted = False  # its turns are in the executor's total already

    def run(self) -> None:
        executor = self._executor
        self._transfers = self._new_transfers()
        idle_since = executor._clock()
        try:
            while True:
                try:
                    busy = bool(self._transfers) or bool(self._held)
                    if not busy and executor._may_end(self, idle_since):
                        return
                    self._turn()
                    if busy and not (self._transfers or self._held):
                        idle_since = executor._clock()
                except Exception:
                    logger.exception("A poll worker failed; it starts afresh")
                    self._start_afresh()
        finally:
            self._abandon(self._transfers)

    def _new_transfers(self) -> Transfers:
        transfers = self._executor._make_transfers()
        transfers.listen(self.doorbell)
        return transfers

    def _start_afresh(self) -> None:
        """Give up the polls in flight (their projects are polled again at
        their next due time) and go on with new handles."""
        transfers, self._transfers = self._transfers, self._new_transfers()
        self._abandon(transfers)

    def _abandon(self, transfers: Transfers) -> None:
        executor = self._executor
        for poll in transfers.close():
            poll.steps.close()
            executor._unclaim(polled=True)
            executor._on_finished(poll.task.target.project_id, None)

    def _turn(self) -> None:
        """Take the tasks there is room for, sleep until a socket, libcurl's
        timer, the doorbell (or, idle, the time to retire) wakes the
        worker, and move on the polls libcurl is done with."""
        self.turns += 1
        self._take_tasks()
        if self._held:
            timeout = HELD_RETRY_SECONDS
        elif self._transfers:
            timeout = None  # libcurl's timer bounds it: every poll has a timeout
        else:
            timeout = self._executor._idle_retire_seconds
        for poll, code, message in self._transfers.wait(timeout):
            self._exchange_ended(poll, code, message)
        if self._held:
            self._hand_over()

    def _take_tasks(self) -> None:
        executor = self._executor
        items, unattended = executor._take(self, len(self._transfers) + len(self._held))
        for item in items:
            if isinstance(item, Task):
                self._start(item)
            else:
                executor._unclaim()
        if unattended:
            executor._grow_if_full()

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
        if executor._divert(task):
            executor._unclaim()  # the side pool runs it in a slot of its own
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
        duration = time.monotonic() - poll.started
        executor._poll_ended(duration)
        logger.debug(
            "Polled project %s: %s %s %s ms %s",
            outcome.project_id,
            "up" if outcome.up else "down",
            outcome.status_code,
            outcome.response_time_ms,
            outcome.error,
        )
        executor._stats.record(outcome, duration_seconds=duration)
        self._held.append(outcome)
        self._hand_over()

    def _hand_over(self) -> None:
        """Queue the held outcomes, oldest first, as many as there is room
        for. A held outcome keeps its slot until then."""
        held = self._held
        while held:
            try:
                self._results.put_nowait(held[0])
            except queue.Full:
                return
            self._executor._queued(held.pop(0))


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)
