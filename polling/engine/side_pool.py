"""The side pool: checks whose protocol needs a blocking driver (a
database's, gRPC's) run here, each on a thread of its own, never on the
executor's libcurl loop, so a driver that hangs holds none of its slots.

Its own limit (SERVICE_CHECK_CONCURRENCY) bounds how many run at once;
the others wait in order of arrival. Every check has a hard deadline, its
project's timeout plus HARD_TIMEOUT_GRACE: the driver is given the
timeout itself and normally fails in time with its own reason; when it
does not, the pool records "timed out after N s" at the deadline and
frees the slot. The thread is abandoned, never joined: it is counted as
hung until its driver returns, if ever, and what it returns then is
dropped. While `max_hung` threads hang, a check due is not started but
fails at once, so a driver that never returns cannot pile up threads.

One thread of the pool (the dispatcher) does all the book-keeping: it
starts checks, enforces deadlines and hands outcomes to the result queue,
holding them, slot and all, while the queue is full (as the executor
does). Check threads only run the driver and report back.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

from polling.engine.reasons import timed_out
from polling.engine.stats import PollStats
from polling.engine.threads import named_thread
from polling.engine.types import Outcome, Task

logger = logging.getLogger(__name__)

# Past the project's timeout, how long a driver has to report its own
# failure before the pool gives up on it.
HARD_TIMEOUT_GRACE = 1.0
# Hung threads allowed, per slot of the limit.
HUNG_PER_SLOT = 4
HELD_RETRY_SECONDS = 0.05
# A check: one blocking poll of the task's target; it never raises.
Check = Callable[[Task], Outcome]


class _Job:
    __slots__ = ("deadline", "done", "started", "started_at", "task")

    def __init__(self, task: Task, started: float, deadline: float) -> None:
        self.task = task
        self.started = started
        self.started_at = datetime.now(UTC)
        self.deadline = deadline
        self.done = False  # its outcome is decided (by the driver or the deadline)


class SidePool:
    """Runs `check(task)` for the tasks `takes(task)` claims, up to `limit`
    at once, each within its hard deadline (see the module's docstring).

    offer(task) is called by the executor's workers: True when the pool
    took the task, whose outcome then goes to `results` and
    `on_finished` as the executor's do."""

    def __init__(
        self,
        results: queue.Queue,
        *,
        limit: int,
        takes: Callable[[Task], bool],
        check: Check,
        on_finished: Callable[[int, Outcome | None], None],
        stats: PollStats,
        grace: float = HARD_TIMEOUT_GRACE,
        max_hung: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 1:
            raise ValueError("the side pool's limit must be at least 1")
        self._results = results
        self._limit = limit
        self._takes = takes
        self._check = check
        self._on_finished = on_finished
        self._stats = stats
        self._grace = grace
        self._max_hung = limit * HUNG_PER_SLOT if max_hung is None else max_hung
        self._clock = clock
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._waiting: deque[Task] = deque()
        self._running: dict[_Job, None] = {}
        self._deadlines: list[tuple[float, int, _Job]] = []
        self._order = itertools.count()
        self._held: list[Outcome] = []
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._names = itertools.count(1)
        # Read by status(); written by the dispatcher only.
        self.hung = 0  # threads abandoned whose driver has not returned
        self.timed_out = 0  # checks the pool gave up on, in all
        self.refused = 0  # checks failed unstarted: too many threads hung
        self.results_queued = 0  # outcomes handed to the result queue

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def offer(self, task: Task) -> bool:
        """Take the task if it is one of the pool's; True when taken."""
        if not self._takes(task):
            return False
        self._inbox.put(task)
        return True

    def start(self) -> None:
        self._thread = named_thread(
            self._dispatch, name="poller-side-pool", daemon=True
        )
        self._thread.start()

    def scale_to(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the side pool's limit must be at least 1")
        self._inbox.put(("limit", limit))

    def stop(self, timeout: float | None = None) -> int:
        """Drop checks not started, wait (within `timeout`) for those
        running to end or reach their deadline, and end the dispatcher.
        Returns how many waiting checks were dropped."""
        counted: list[int] = []
        self._inbox.put(("stop", counted))
        if self._thread is None:
            return 0
        self._thread.join(timeout)
        return counted[0] if counted else 0

    # The dispatcher ------------------------------------------------------

    def _dispatch(self) -> None:
        while True:
            try:
                message = self._inbox.get(timeout=self._wait_seconds())
            except queue.Empty:
                message = None
            try:
                self._handle(message)
                self._expire()
                self._hand_over()  # first: a held outcome keeps its slot
                self._start_waiting()
            except Exception:
                logger.exception("The side pool's dispatcher failed; it goes on")
            if self._stopping and not self._running and not self._held:
                return

    def _wait_seconds(self) -> float | None:
        if self._held:
            return HELD_RETRY_SECONDS
        while self._deadlines and self._deadlines[0][2].done:
            heapq.heappop(self._deadlines)
        if self._deadlines:
            return max(self._deadlines[0][0] - self._clock(), 0.0)
        return None

    def _handle(self, message) -> None:
        """Act on one message."""
        if isinstance(message, Task):
            if self._stopping:
                self._on_finished(message.target.project_id, None)
            else:
                self._waiting.append(message)
        elif isinstance(message, tuple) and message[0] == "done":
            _, job, outcome = message
            self._driver_returned(job, outcome)
        elif isinstance(message, tuple) and message[0] == "limit":
            self._limit = message[1]
        elif isinstance(message, tuple) and message[0] == "stop":
            self._stopping = True
            message[1].append(self._drop_waiting())

    def _drop_waiting(self) -> int:
        dropped = len(self._waiting)
        while self._waiting:
            self._on_finished(self._waiting.popleft().target.project_id, None)
        return dropped

    def _start_waiting(self) -> None:
        # A held outcome keeps its slot until the result queue takes it.
        while self._waiting and len(self._running) + len(self._held) < self._limit:
            task = self._waiting.popleft()
            if self.hung >= self._max_hung:
                self.refused += 1
                reason = (
                    f"not checked: {self.hung} earlier checks still hang "
                    "(their drivers never returned)"
                )
                self._decided(task, _failed(task, reason), 0.0)
                continue
            self._run(task)

    def _run(self, task: Task) -> None:
        now = self._clock()
        job = _Job(task, now, now + task.target.timeout_seconds + self._grace)
        self._running[job] = None
        heapq.heappush(self._deadlines, (job.deadline, next(self._order), job))
        thread = named_thread(
            self._drive,
            args=(job,),
            name=f"poller-side-check-{next(self._names)}",
            daemon=True,
        )
        try:
            thread.start()
        except RuntimeError as error:  # out of threads
            self._running.pop(job)
            job.done = True
            self._decided(task, _failed(task, f"not checked: {error}"), 0.0)

    def _drive(self, job: _Job) -> None:
        """On a check thread: run the driver and report what it found."""
        try:
            outcome = self._check(job.task)
        except BaseException as error:  # a check never raises; a last resort
            outcome = _failed(job.task, f"unexpected error: {type(error).__name__}")
        self._inbox.put(("done", job, outcome))

    def _driver_returned(self, job: _Job, outcome: Outcome) -> None:
        if job.done:  # abandoned at its deadline: its slot went on long ago
            self.hung -= 1
            return
        job.done = True
        self._running.pop(job, None)
        self._decided(job.task, outcome, self._clock() - job.started)

    def _expire(self) -> None:
        now = self._clock()
        while self._deadlines and self._deadlines[0][0] <= now:
            _, _, job = heapq.heappop(self._deadlines)
            if job.done:
                continue
            job.done = True
            self._running.pop(job, None)
            self.hung += 1
            self.timed_out += 1
            logger.warning(
                "A check of project %s did not return by its deadline; its "
                "thread is abandoned (%d hang)",
                job.task.target.project_id,
                self.hung,
            )
            reason = timed_out(job.task.target.timeout_seconds)
            outcome = _failed(job.task, reason, job.started_at)
            self._decided(job.task, outcome, now - job.started)

    def _decided(self, task: Task, outcome: Outcome, seconds: float) -> None:
        self._stats.record(outcome, duration_seconds=seconds)
        self._held.append(outcome)

    def _hand_over(self) -> None:
        held = self._held
        while held:
            try:
                self._results.put_nowait(held[0])
            except queue.Full:
                return
            outcome = held.pop(0)
            self.results_queued += 1
            self._on_finished(outcome.project_id, outcome)


def _failed(task: Task, reason: str, started_at: datetime | None = None) -> Outcome:
    return Outcome(
        project_id=task.target.project_id,
        up=False,
        started_at=started_at or datetime.now(UTC),
        due_at=task.due_at,
        error=reason,
    )
