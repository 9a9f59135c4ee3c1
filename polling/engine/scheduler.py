"""The scheduler thread: one heap of due times for every project."""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from polling.engine import heartbeats
from polling.engine.continuation import continuation
from polling.engine.due_heap import DueHeap
from polling.engine.rechecks import Rechecks
from polling.engine.threads import named_thread
from polling.engine.types import Outcome, Target, Task

logger = logging.getLogger(__name__)

# With nothing scheduled the thread sleeps until add() wakes it; this only
# bounds that sleep.
IDLE_WAIT_SECONDS = 60.0
# Pops per step; the lock is never held for long, even with 50,000 due at once.
DISPATCH_BATCH = 1000
PUT_RETRY_SECONDS = 0.2
# Projects per hold of the lock in replace_all().
RELOAD_CHUNK = 2000
# While the leases are not trusted, how often to look again (a renewal
# wakes the thread at once).
UNTRUSTED_WAIT_SECONDS = 1.0
# The thread rests at least this long between rounds, so polls due within
# it go out together, at most this much late. Woken for every due time, at
# 5,000 polls/s it woke 5,000 times a second, each time taking the
# interpreter lock from the workers: runpoller used twice the CPU
# (docs/BENCHMARKS.md, "Fewer wake-ups").
DISPATCH_TICK_SECONDS = 0.002


def utc_now() -> datetime:
    return datetime.now(UTC)


def recheck_slots(limit: int) -> int:
    """Busy slots beyond which re-checks are skipped: half the executor's
    limit, so a mass failure leaves the other half to regular polls."""
    return max(limit // 2, 1)


def first_poll_offset(rank: int, count: int, interval: float, spread: float) -> float:
    """Seconds after a load at which the rank-th (from 0) of `count` new
    projects is first polled: evenly over min(interval, spread)."""
    return min(interval, spread) * rank / count


def _chunks(items: list) -> Iterable[list]:
    for first in range(0, len(items), RELOAD_CHUNK):
        yield items[first : first + RELOAD_CHUNK]


def _by_project_id(target: Target) -> int:
    return target.project_id


@dataclass(frozen=True, slots=True)
class ReloadSummary:
    added: int
    updated: int
    removed: int


class Scheduler:
    """Decides when each project is polled and puts due Tasks on the queue.

    Fixed cadence: the next due time is the previous one plus the interval,
    so polls never drift. A tick is skipped (and counted) when the previous
    poll of the project is still running, and when the scheduler has fallen
    more than an interval behind, so a stall never turns into a burst. The
    one exception is the window a project taken over from another poller
    lost with it, polled late once (engine/continuation.py).

    A failing project not yet confirmed down (and a recovering one, see
    rechecks.py) is polled again after min(interval, recheck_seconds); its
    regular cadence resumes afterwards, on the same grid as before.
    Re-checks are extra polls, and one of a hanging target holds its slot
    for the whole timeout: when many targets fail at once they would take
    the slots the others' regular polls need. So a re-check is made only
    while fewer than `recheck_slots` polls are queued or running, and
    otherwise skipped (counted): the project is then confirmed by its
    regular polls, later.
    """

    def __init__(
        self,
        task_queue: queue.Queue,
        *,
        spread_seconds: float = 60,
        recheck_seconds: float = 20,
        recheck_slots: int | None = None,
        phase_fraction: float = 0.0,
        phase_spread_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._queue = task_queue
        self._spread_seconds = spread_seconds
        self._phase_fraction = phase_fraction
        self._phase_spread_seconds = phase_spread_seconds
        self._recheck_seconds = recheck_seconds
        self._recheck_slots = math.inf if recheck_slots is None else recheck_slots
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._targets: dict[int, Target] = {}
        self._due = DueHeap()
        self._in_flight: set[int] = set()
        self._rechecks = Rechecks()
        # The window (wall clock) of each project's scheduled poll.
        self._windows: dict[int, datetime] = {}
        # The regular due time and window of each project whose next poll
        # is a re-check: the cadence goes on from them.
        self._cadence: dict[int, tuple[float, datetime]] = {}
        # Projects whose next window is over but is polled all the same:
        # a window a poller lost when it stopped (engine/continuation.py);
        # the due time and window after each such poll, scheduled once it
        # is over, so that the window (due too, as a rule) is not skipped
        # as busy.
        self._late: set[int] = set()
        self._after_late: dict[int, tuple[float, datetime]] = {}
        self._trusted_until = math.inf
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.dispatched = 0
        self.rounds = 0  # the thread's turns: see DISPATCH_TICK_SECONDS
        self.skipped_busy = 0
        self.skipped_late = 0
        self.rechecked = 0
        self.skipped_rechecks = 0
        self.continued = 0

    # Lifecycle

    def start(self) -> None:
        self._thread = named_thread(self._run, name="poller-scheduler")
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stopping.set()
        self._wakeup.set()
        if self._thread:
            self._thread.join(timeout)

    def wakeup(self) -> None:
        self._wakeup.set()

    def limit_rechecks(self, slots: int) -> None:
        """Make re-checks only while fewer than `slots` polls are queued or
        running (the executor's limit changed)."""
        with self._lock:
            self._recheck_slots = slots

    def trust_until(self, deadline: float) -> None:
        """Dispatch nothing from `deadline` (monotonic) on, until a later
        one is given: the poller's leases may have expired by then."""
        self._trusted_until = deadline
        self.wakeup()

    # What to poll

    def add(self, target: Target) -> bool:
        """Add or update one project; a new or changed one is due at once.
        Returns True when the project is new."""
        with self._lock:
            is_new = self._put_target(target, first_due=self._clock())
        self.wakeup()
        return is_new

    def remove(self, project_id: int) -> bool:
        """Stop polling a project. A poll already running still finishes."""
        with self._lock:
            known = self._targets.pop(project_id, None) is not None
            self._forget(project_id)
        return known

    def retain(self, keep: Callable[[int], bool]) -> int:
        """Stop polling every project `keep` refuses (by id), a chunk of
        them per hold of the lock. Returns how many were dropped."""
        with self._lock:
            dropped = [pid for pid in self._targets if not keep(pid)]
        for chunk in _chunks(dropped):
            with self._lock:
                for project_id in chunk:
                    self._targets.pop(project_id, None)
                    self._forget(project_id)
        return len(dropped)

    def replace_all(self, targets: Iterable[Target]) -> ReloadSummary:
        """Make the scheduled set exactly `targets`.

        New projects get their first poll spread evenly over
        min(interval, spread_seconds), in project-id order, so thousands of
        projects loaded at once don't fire in the same second. Changed ones
        are due at once; unchanged ones keep their time.

        The lock is taken per chunk of RELOAD_CHUNK projects, so a reload
        of 300,000 never holds up dispatching for long.
        """
        wanted = {target.project_id: target for target in targets}
        with self._lock:
            removed = [pid for pid in self._targets if pid not in wanted]
            new_ids = {pid for pid in wanted if pid not in self._targets}
        for chunk in _chunks(removed):
            with self._lock:
                for project_id in chunk:
                    self._targets.pop(project_id, None)
                    self._forget(project_id)
        known = [t for pid, t in wanted.items() if pid not in new_ids]
        updated = 0
        for chunk in _chunks(known):
            with self._lock:
                now = self._clock()
                for target in chunk:
                    old = self._targets.get(target.project_id)
                    if old is target:
                        continue  # kept by scheduled_or: unchanged
                    updated += old is not None and old != target
                    self._put_target(target, first_due=now)
        new = sorted((wanted[pid] for pid in new_ids), key=_by_project_id)
        fresh = []
        for chunk in _chunks(new):
            with self._lock:
                fresh += [target for target in chunk if not self._continue(target)]
        now = self._clock()
        for first in range(0, len(fresh), RELOAD_CHUNK):
            with self._lock:
                for rank in range(first, min(first + RELOAD_CHUNK, len(fresh))):
                    target = fresh[rank]
                    offset = first_poll_offset(
                        rank, len(fresh), target.interval_seconds, self._spread_seconds
                    ) + self._phase_offset(target.interval_seconds)
                    self._put_target(target, first_due=now + offset)
            # The first of them are due at once: dispatch them while the
            # rest go in (300,000 take about a second), not after.
            self.wakeup()
        self.wakeup()
        return ReloadSummary(added=len(new), updated=updated, removed=len(removed))

    def _phase_offset(self, interval: float) -> float:
        """How much later than others this poller's first polls come: its
        region's place in the spread (docs/regions.md)."""
        return self._phase_fraction * min(self._phase_spread_seconds, interval / 4)

    def _continue(self, target: Target) -> bool:
        """Schedule a project new to this poller at the window after its
        last stored one (engine/continuation.py): no gap and no extra poll
        when it was polled elsewhere. Returns False when it should start
        afresh instead. Caller holds the lock."""
        if target.heartbeat:
            return False
        wall_now = self._wall_clock()
        going_on = continuation(target.last_window, target.interval_seconds, wall_now)
        if going_on is None:
            return False
        self._targets[target.project_id] = target
        due = self._clock() + (going_on.window - wall_now).total_seconds()
        self._schedule(target.project_id, due, going_on.window)
        if going_on.late:
            self._late.add(target.project_id)
        self.continued += 1
        return True

    def poll_finished(self, project_id: int, outcome: Outcome | None = None) -> None:
        """Called by the executor once a poll is over, with its outcome (None
        when it made none, e.g. a task dropped at stop)."""
        if project_id not in self._after_late and (
            outcome is None or (outcome.up and project_id not in self._rechecks)
        ):
            # Most polls: nothing to note but the end of the poll. The
            # discard is one atomic step, and skipping the lock spares every
            # worker a wait behind a whole dispatch batch.
            self._in_flight.discard(project_id)
            return
        with self._lock:
            self._in_flight.discard(project_id)
            soon = self._schedule_after_late(project_id)
            target = self._targets.get(project_id)
            soon |= (
                outcome is not None
                and target is not None
                and not target.heartbeat
                and self._rechecks.wanted(target, outcome.up)
                and self._schedule_recheck(target)
            )
        if soon:
            self.wakeup()

    def _schedule_after_late(self, project_id: int) -> bool:
        """Once a late poll is over, schedule the window after it (due
        already, as a rule: polled at once). Caller holds the lock."""
        after = self._after_late.pop(project_id, None)
        if after is None or project_id not in self._targets:
            return False
        self._schedule(project_id, *after)
        return True

    def _schedule_recheck(self, target: Target) -> bool:
        """Move the next poll forward to a re-check, if that is sooner.
        Caller holds the lock."""
        project_id = target.project_id
        regular = self._cadence.get(project_id)
        if regular is None and project_id in self._due:
            regular = (self._due.due(project_id), self._windows[project_id])
        delay = min(target.interval_seconds, self._recheck_seconds)
        at = self._clock() + delay
        if regular is None or at >= regular[0]:
            return False
        self._cadence[project_id] = regular
        self._schedule(project_id, at, self._wall_clock() + timedelta(seconds=delay))
        return True

    def _forget(self, project_id: int) -> None:
        """Drop a project's schedule. Caller holds the lock."""
        self._due.remove(project_id)
        self._windows.pop(project_id, None)
        self._cadence.pop(project_id, None)
        self._late.discard(project_id)
        self._after_late.pop(project_id, None)
        self._rechecks.forget(project_id)

    def _schedule(self, project_id: int, due: float, window: datetime) -> None:
        """Put the project's next poll on the heap. Caller holds the lock."""
        self._due.schedule(project_id, due)
        self._windows[project_id] = window

    def _window_at(self, due: float) -> datetime:
        """The wall-clock time of a monotonic one."""
        return self._wall_clock() + timedelta(seconds=due - self._clock())

    # Reading

    @property
    def project_count(self) -> int:
        return len(self._targets)

    def polls_per_second(self) -> float:
        """Regular polls due per second, over every project."""
        with self._lock:
            intervals = [target.interval_seconds for target in self._targets.values()]
        return sum(1 / interval for interval in intervals if interval > 0)

    def project_ids(self) -> set[int]:
        with self._lock:
            return set(self._targets)

    def target(self, project_id: int) -> Target | None:
        return self._targets.get(project_id)

    def scheduled_or(self, target: Target) -> Target:
        """The target already scheduled for this project if it equals
        `target`, else `target`. A reload keeps the objects it has: a fresh
        copy of every project would live long enough to reach the garbage
        collector's oldest generation, and a full pass over 300,000 of them
        holds the interpreter lock for half a second (engine/collector.py)."""
        scheduled = self._targets.get(target.project_id)
        return scheduled if scheduled == target else target

    def in_flight_ids(self) -> set[int]:
        """Projects whose poll is queued or running."""
        with self._lock:
            return set(self._in_flight)

    def due_in(self, project_id: int) -> float | None:
        """Seconds until the project is next due, or None if not scheduled."""
        with self._lock:
            due = self._due.due(project_id)
        return None if due is None else due - self._clock()

    # The work

    def dispatch_due(self) -> float:
        """Queue every poll that is due now. Returns the seconds to wait
        before the next one is due."""
        if self._clock() >= self._trusted_until:
            return UNTRUSTED_WAIT_SECONDS
        while True:
            tasks, more = self._take_due()
            for task in tasks:
                if not self._put(task):
                    return 0.0
                self.dispatched += 1
            if not more:
                break
        with self._lock:
            next_due = self._due.next_due()
        if next_due is None:
            return IDLE_WAIT_SECONDS
        return max(next_due - self._clock(), 0.0)

    def _take_due(self) -> tuple[list[Task], bool]:
        now = self._clock()
        tasks = []
        with self._lock:
            due_now = self._due.pop_due(now, DISPATCH_BATCH)
            for project_id, due in due_now:
                target = self._targets[project_id]
                recheck, window = self._schedule_next(project_id, due, now, target)
                if project_id in self._in_flight:
                    self.skipped_busy += 1
                    continue
                if recheck:
                    if len(self._in_flight) >= self._recheck_slots:
                        self.skipped_rechecks += 1
                        continue
                    self.rechecked += 1
                self._in_flight.add(project_id)
                tasks.append(Task(target=target, due_at=window, recheck=recheck))
        return tasks, len(due_now) == DISPATCH_BATCH

    def _schedule_next(
        self, project_id: int, due: float, now: float, target: Target
    ) -> tuple[bool, datetime]:
        """Schedule the poll after the one due now. Returns whether the one
        due now is a re-check, and its window (after skipping missed
        ticks). Caller holds the lock."""
        step = timedelta(seconds=target.interval_seconds)
        window = self._windows.pop(project_id, None) or self._window_at(due)
        regular = self._cadence.pop(project_id, None)
        if regular is not None:
            regular_due, regular_window = regular
            while regular_due <= now:  # the re-check stands in for it
                regular_due += target.interval_seconds
                regular_window += step
            self._schedule(project_id, regular_due, regular_window)
            return True, window
        if project_id in self._late:
            # A window lost elsewhere: polled late, not skipped; the next
            # waits for its end (poll_finished).
            self._late.discard(project_id)
            self._after_late[project_id] = (
                due + target.interval_seconds,
                window + step,
            )
            return False, window
        missed = int((now - due) // target.interval_seconds)
        if missed:
            self.skipped_late += missed
            due += missed * target.interval_seconds
            window += missed * step
        self._schedule(project_id, due + target.interval_seconds, window + step)
        return False, window

    def _put(self, task: Task) -> bool:
        """Block until the queue takes the task (backpressure: nothing is
        dropped). Returns False if asked to stop meanwhile."""
        while not self._stopping.is_set():
            try:
                self._queue.put(task, timeout=PUT_RETRY_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _put_target(self, target: Target, *, first_due: float) -> bool:
        """Store a target. A new one is first due at first_due; a changed
        one is due at once, so an edit shows its effect right away, and its
        cadence restarts from there. A heartbeat project is due at its
        deadline either way. Caller holds the lock."""
        old = self._targets.get(target.project_id)
        self._targets[target.project_id] = target
        if old is None:
            due = self._due_for(target, first_due)
        elif old != target:
            self._cadence.pop(target.project_id, None)
            self._late.discard(target.project_id)
            self._after_late.pop(target.project_id, None)
            due = self._due_for(target, self._clock())
        else:
            return False
        self._schedule(target.project_id, due, self._window_at(due))
        return old is None

    def _due_for(self, target: Target, default: float) -> float:
        """When to look at a target next: a heartbeat project at its
        deadline, any other at `default`."""
        wait = heartbeats.first_due(target, self._wall_clock())
        return default if wait is None else self._clock() + wait

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wakeup.clear()
            try:
                wait = self.dispatch_due()
            except Exception:
                logger.exception("Scheduler step failed; carrying on")
                wait = 1.0
            self.rounds += 1
            self._wakeup.wait(max(wait, DISPATCH_TICK_SECONDS))
