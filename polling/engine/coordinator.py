"""The Coordinator owns the poller's parts and wires them together.

scheduler ──▶ task queue ──▶ executor ──▶ result queue ──▶ writer ──▶ DB
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Protocol

from polling.engine import collector, metrics
from polling.engine import probe as probing
from polling.engine.blocked import parse_networks
from polling.engine.config import MAX_CONCURRENT_LIMIT, PollerConfig
from polling.engine.executor import Executor
from polling.engine.handoff import TaskQueue
from polling.engine.pacing import RELOAD_SHARE, Pacer, no_pause
from polling.engine.scheduler import ReloadSummary, Scheduler, recheck_slots
from polling.engine.shards import Ownership
from polling.engine.side_pool import SidePool
from polling.engine.stats import PollStats
from polling.engine.status import PollerStatus
from polling.engine.threads import named_thread
from polling.engine.tls_sessions import SessionShares
from polling.engine.types import Outcome, RunState, Target, Task
from polling.engine.writer import ResultStore, ResultWriter

logger = logging.getLogger(__name__)

SETTLE_STEP_SECONDS = 0.05
# The periodic reload reads the projects saved since the last load began,
# less this: a save committed that much after its timestamp was taken, or
# stamped by a web server whose clock is that much behind, is still seen.
CHANGES_OVERLAP = timedelta(minutes=10)


class TargetSource(Protocol):
    """Where the projects to poll come from (the database, in runpoller)."""

    def load_all(self, pause: Callable[[], None] = no_pause) -> Iterable[Target]:
        """Every project that should be polled, best as an iterator that
        reads them as it goes; calls `pause` every few thousand projects,
        to pace the load (engine/pacing.py)."""

    def load_changes(
        self,
        since: datetime,
        known: Callable[[int], bool],
        pause: Callable[[], None] = no_pause,
    ) -> tuple[Collection[int], list[Target]]:
        """The ids of every project that should be polled, and the targets
        of those changed since `since` and of those `known` says are not
        known (more may come: they are compared). Paced like load_all()."""

    def load_some(self, project_ids: Collection[int]) -> list[Target]:
        """Those of these projects that should be polled, as targets, read
        together (a burst of saves is one read); the others are left out."""

    def close(self) -> None:
        """Release what the calling thread holds (its database connection)."""


# What sync_projects() says of a project while the poller starts.
DEFERRED = "deferred"
# Past this many projects synced while the poller started, one full reload
# follows them instead of a read of each: cheaper, and within the limit
# of a query's parameters however many came (PostgreSQL's is 65,535).
MAX_SYNCED_WHILE_STARTING = 500


class NotRunning(RuntimeError):
    """The coordinator takes no new work: it is not running (yet or any
    more), as concurrent.futures refuses work after shutdown."""


class Coordinator:
    """Owns the poller's threads: start() starts them, stop() stops them in
    dependency order. Between the two, projects can be added, removed,
    synced and reloaded, and the concurrency limit changed."""

    def __init__(
        self,
        config: PollerConfig,
        *,
        source: TargetSource,
        store: ResultStore,
        ownership: Ownership | None = None,
        lease_statements: Callable[[], int] = lambda: 0,
        clock=time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self._source = source
        # Every project, unless a lease keeper says otherwise (several
        # pollers on PostgreSQL: polling/leases.py).
        self._ownership = ownership or Ownership.everything()
        self._lease_statements = lease_statements
        self._clock = clock
        self._wall_clock = wall_clock
        self._state = RunState.NEW
        self._lock = threading.Lock()  # guards _state
        self._reload_lock = threading.Lock()
        self._stopping = threading.Event()
        self._stats = PollStats(region=config.region)
        self._task_queue: queue.Queue = TaskQueue(config.task_queue_size)
        self._result_queue: queue.Queue = queue.Queue(config.result_queue_size)
        self._scheduler = Scheduler(
            self._task_queue,
            spread_seconds=config.spread_seconds,
            phase_fraction=config.phase_fraction,
            phase_spread_seconds=config.phase_spread_seconds,
            recheck_seconds=config.recheck_seconds,
            recheck_slots=recheck_slots(config.max_concurrent_http),
            clock=clock,
        )
        self._scheduler.trust_until(self._ownership.trusted_until)
        self._side_pool = SidePool(
            self._result_queue,
            limit=config.service_check_concurrency,
            takes=probing.needs_side_pool,
            check=partial(
                probing.side_check,
                blocked_networks=parse_networks(config.blocked_networks),
            ),
            on_finished=self._scheduler.poll_finished,
            stats=self._stats,
        )
        self._executor = Executor(
            self._task_queue,
            self._result_queue,
            limit=config.max_concurrent_http,
            poll=probing.poll_steps,
            # One store of TLS sessions and certificates for all workers:
            # a project's polls go to whichever worker is free.
            make_transfers=partial(
                probing.make_transfers,
                blocked_networks=config.blocked_networks,
                sessions=SessionShares(),
                certificates={},
            ),
            on_finished=self._scheduler.poll_finished,
            stats=self._stats,
            may_poll=self._may_poll,
            divert=self._side_pool.offer,
        )
        self._writer = ResultWriter(
            self._result_queue,
            store,
            batch_size=config.write_batch_size,
            batch_seconds=config.write_batch_seconds,
            on_saved=self._follow_deadlines,
        )
        self._stats.registry.register(
            metrics.PollerCollector(
                self.status, self._scheduler.project_ids, self._stats
            )
        )
        self._reloader: threading.Thread | None = None
        self._started_at: float | None = None
        self._last_reload_at: datetime | None = None
        # When the latest load that brought every project up to date began.
        self._loaded_since: datetime | None = None
        # What the control endpoint (it serves before the projects are
        # loaded) was asked while start() ran: followed once running.
        self._synced_while_starting: set[int] = set()
        self._reload_when_running = False
        # The project ids the last periodic reload named (None after a full
        # load): the same ids with nothing changed need no reload.
        self._reloaded_ids: list[int] | None = None
        self._dropped_at_stop = 0

    @property
    def state(self) -> RunState:
        return self._state

    def start(self) -> None:
        """Load the projects, then start every thread. If a step fails,
        whatever already started is stopped (within config.stop_timeout)
        and the error is raised; the coordinator is then stopped for good."""
        with self._lock:
            if self._state is not RunState.NEW:
                raise RuntimeError(
                    f"cannot start a coordinator that is {self._state.value}"
                )
            self._state = RunState.STARTING
        self._started_at = time.monotonic()
        try:
            # Load before starting threads: if the database is down,
            # nothing is left running. A poller that holds no shard yet
            # would drop every project loaded; set_ownership() loads its
            # shards' projects once its leases arrive.
            targets = self._load_all() if self._ownership.shards else []
            self._writer.start()
            self._side_pool.start()
            self._executor.start()
            # Dispatching before the projects go in: the first are due
            # at once, and scheduling 300,000 takes about a second, which
            # they used to wait on top (the start-up minute's lag p99 was
            # 0.9-1.3 s, docs/benchmarks.md).
            self._scheduler.start()
            summary = self._apply_reload(targets)
            self._reloader = named_thread(self._reload_forever, name="poller-reloader")
            self._reloader.start()
        except BaseException:
            self._shut_down(self.config.stop_timeout)
            raise
        with self._lock:
            self._state = RunState.RUNNING
            synced, self._synced_while_starting = self._synced_while_starting, set()
            reload, self._reload_when_running = self._reload_when_running, False
        logger.info("Poller started with %d projects", summary.added)
        self._follow_changes_made_while_starting(synced, reload=reload)

    def stop(self, timeout: float | None = None) -> None:
        """Stop in dependency order: no new polls, let running polls finish,
        save every result, then end. With a timeout, gives up waiting once
        it has passed (status() then counts what was left unsaved). Safe to
        call twice; a coordinator never started cannot be started after."""
        with self._lock:
            if self._state is RunState.NEW:
                self._state = RunState.STOPPED
            if self._state is not RunState.RUNNING:
                return
            self._state = RunState.STOPPING
        self._shut_down(timeout)

    def _shut_down(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._state = RunState.STOPPING
        self._stopping.set()
        self._scheduler.stop(_left(deadline))
        if self._reloader:
            self._reloader.join(_left(deadline))
        self._dropped_at_stop = self._executor.stop(_left(deadline))
        self._dropped_at_stop += self._side_pool.stop(_left(deadline))
        # Only now can the writer tell that nothing more will arrive.
        self._writer.stop(_left(deadline))
        with self._lock:
            self._state = RunState.STOPPED

    # Changing what is polled

    def add_project(self, target: Target) -> bool:
        """Poll this project from now on (at once if it is new)."""
        self._require_running()
        return self._scheduler.add(target)

    def remove_project(self, project_id: int) -> bool:
        self._require_running()
        return self._scheduler.remove(project_id)

    def sync_project(self, project_id: int) -> str:
        """Read one project from the source and follow it: add or update
        it when it should be polled, remove it otherwise. Returns what
        happened: "added", "updated" or "removed" (or "absent")."""
        return self.sync_projects([project_id])[project_id]

    def sync_projects(self, project_ids: Collection[int]) -> dict[int, str]:
        """sync_project() for each of these projects, read in one go: what
        happened to each, by id ("deferred" while the poller starts: each
        is read once it runs)."""
        if self._deferred_while_starting(project_ids):
            return dict.fromkeys(project_ids, DEFERRED)
        self._require_running()
        targets = {
            target.project_id: target
            for target in self._source.load_some(project_ids)
            # Another poller's: it hears of the change too.
            if self._ownership.owns(target.project_id)
        }
        results = {}
        for project_id in project_ids:
            if (target := targets.get(project_id)) is not None:
                added = self.add_project(target)
                results[project_id] = "added" if added else "updated"
            else:
                removed = self.remove_project(project_id)
                results[project_id] = "removed" if removed else "absent"
        return results

    def reload_projects(self) -> ReloadSummary:
        """Make the polled set match the source (while the poller starts:
        once it runs, and nothing has changed yet)."""
        if self._deferred_while_starting(reload=True):
            return ReloadSummary(0, 0, 0)
        self._require_running()
        return self._apply_reload(self._load_all())

    def _deferred_while_starting(
        self, project_ids: Collection[int] = (), *, reload: bool = False
    ) -> bool:
        """Keep a change asked for while start() runs, for when it is done;
        True when kept. Refused instead, a change saved after the load read
        its row would wait for the periodic reload (POLLER_RELOAD_INTERVAL,
        5 minutes) at every restart of a poller."""
        with self._lock:
            if self._state is not RunState.STARTING:
                return False
            self._synced_while_starting.update(project_ids)
            self._reload_when_running |= reload
            return True

    def _follow_changes_made_while_starting(
        self, project_ids: set[int], *, reload: bool
    ) -> None:
        try:
            if reload or len(project_ids) > MAX_SYNCED_WHILE_STARTING:
                self.reload_projects()
            elif project_ids:
                self.sync_projects(sorted(project_ids))
        except NotRunning:
            return  # stopped meanwhile: nothing more will be polled
        except Exception:
            logger.exception(
                "Following the changes made while the poller started failed; "
                "the periodic reload will"
            )

    # Sharing the projects with other pollers

    @property
    def ownership(self) -> Ownership:
        return self._ownership

    def set_ownership(self, ownership: Ownership) -> None:
        """Poll the projects of these shards from now on, until
        ownership.trusted_until. Projects of shards lost are dropped (their
        queued polls are not made); those of shards gained are loaded and
        continue their cadence from their last stored result."""
        old, self._ownership = self._ownership, ownership
        same = old.shards == ownership.shards and old.count == ownership.count
        running = self._state in (RunState.STARTING, RunState.RUNNING)
        lost = sorted(old.shards - ownership.shards)
        gained = sorted(ownership.shards - old.shards)
        if lost:
            logger.warning("Lost %d shards: %s", len(lost), _shard_list(lost))
            if running:
                # Before the trust is renewed: a poller back from a pause
                # would otherwise dispatch the lost projects' old due times
                # (dropped by _may_poll, but counted as skipped ticks).
                self._scheduler.retain(ownership.owns)
        self._scheduler.trust_until(ownership.trusted_until)
        if same:
            return
        if gained:
            logger.info("Took %d shards: %s", len(gained), _shard_list(gained))
        if running:
            self._apply_reload(self._load_all())

    def settle(self, timeout: float) -> bool:
        """Wait until the polls of projects no longer owned have finished
        and every result queued by then is saved: before handing their
        shards over. Returns False if `timeout` passed first."""
        deadline = self._clock() + timeout
        owns = self._ownership.owns
        waiting = {p for p in self._scheduler.in_flight_ids() if not owns(p)}
        if not self._wait_for(
            lambda: not waiting & self._scheduler.in_flight_ids(), deadline
        ):
            return False
        queued = self._executor.results_queued + self._side_pool.results_queued
        return self._wait_for(lambda: self._writer.settled >= queued, deadline)

    def _wait_for(self, condition, deadline: float) -> bool:
        while not condition():
            if self._clock() >= deadline or self._stopping.wait(SETTLE_STEP_SECONDS):
                return False
        return True

    def _may_poll(self, task: Task) -> bool:
        ownership = self._ownership
        return ownership.owns(task.target.project_id) and ownership.trusted(
            self._clock(), self._wall_clock()
        )

    def scale_to(self, limit: int) -> None:
        self._require_running()
        self._executor.scale_to(limit)
        self._scheduler.limit_rechecks(recheck_slots(limit))
        logger.info("Concurrency limit is now %d", limit)

    def _follow_deadlines(self, outcomes: Sequence[Outcome]) -> None:
        """Once a missed-ping check is saved (kept or dropped because a ping
        came first), re-read the project, so the next check is at its
        deadline as the database now has it."""
        for outcome in outcomes:
            if outcome.is_missed_ping:
                try:
                    self.sync_project(outcome.project_id)
                except NotRunning:
                    return  # stopping: nothing more will be checked

    def _require_running(self) -> None:
        state = self._state
        if state is not RunState.RUNNING:
            raise NotRunning(f"the poller is {state.value}")

    def _load_all(self, pause: Callable[[], None] = no_pause) -> list[Target]:
        began = datetime.now(UTC)
        scheduled_or = self._scheduler.scheduled_or
        targets = [scheduled_or(target) for target in self._source.load_all(pause)]
        self._loaded_since = max(self._loaded_since or began, began)
        self._reloaded_ids = None
        return targets

    def _load_changes(self, pause: Callable[[], None]) -> list[Target] | None:
        """Every project, as _load_all() finds them, reading only those
        changed since the last load and those the scheduler lacks: the
        periodic reload at 300,000 projects took 6 s of CPU, most of it
        making targets that were there already. None when nothing changed
        since the last reload (the same ids, every target read equal to
        the one scheduled): an agent reloads every second, and replacing
        300,000 projects by themselves took a fifth of its CPU."""
        if self._loaded_since is None:
            return self._load_all(pause)
        began = datetime.now(UTC)
        scheduled = self._scheduler.target
        owns = self._ownership.owns

        def known(project_id: int) -> bool:
            return scheduled(project_id) is not None or not owns(project_id)

        ids, changed = self._source.load_changes(
            self._loaded_since - CHANGES_OVERLAP, known, pause
        )
        scheduled_or = self._scheduler.scheduled_or
        fresh = {target.project_id: scheduled_or(target) for target in changed}
        self._loaded_since = max(self._loaded_since, began)
        unchanged = ids == self._reloaded_ids and all(
            target is scheduled(pid) for pid, target in fresh.items()
        )
        self._reloaded_ids = ids
        if unchanged:
            return None
        targets = [fresh.get(pid) or scheduled(pid) for pid in ids]
        return [target for target in targets if target is not None]

    def _apply_reload(self, targets: list[Target]) -> ReloadSummary:
        with self._reload_lock:
            # Under the lock: a reload racing a change of shards must not
            # bring back the projects of a shard just lost.
            owns = self._ownership.owns
            targets = [t for t in targets if owns(t.project_id)]
            summary = self._scheduler.replace_all(targets)
            self._last_reload_at = datetime.now(UTC)
        if self.config.freeze_after_load:
            collector.freeze_survivors()
        logger.info(
            "Reloaded projects: %d added, %d updated, %d removed",
            summary.added,
            summary.updated,
            summary.removed,
        )
        return summary

    # Reading

    def target(self, project_id: int) -> Target | None:
        """What the poller polls for this project, or None."""
        return self._scheduler.target(project_id)

    def status(self) -> PollerStatus:
        lag_p50, lag_p99, lag_max = self._stats.lag_percentiles(50, 99, 100)
        slots = self._executor.slot_report()
        suggested = None
        if slots.delaying():  # only then is the sum over every project worth it
            suggested = slots.suggested_limit(
                self._executor.limit,
                self._scheduler.polls_per_second(),
                MAX_CONCURRENT_LIMIT,
            )
        uptime = (
            0.0 if self._started_at is None else time.monotonic() - self._started_at
        )
        return PollerStatus(
            state=self._state.value,
            active_projects=self._scheduler.project_count,
            polls_total=self._stats.total,
            polls_up=self._stats.up,
            polls_down=self._stats.down,
            polls_in_flight=self._executor.in_flight,
            max_concurrent_http=self._executor.limit,
            task_queue_depth=self._task_queue.qsize(),
            result_queue_depth=self._result_queue.qsize(),
            results_pending_write=self._result_queue.qsize() + self._writer.pending,
            results_written=self._writer.written,
            results_rejected=self._writer.rejected,
            results_unsaved=self._writer.unsaved,
            failed_writes=self._writer.failed_writes,
            skipped_busy=self._scheduler.skipped_busy,
            skipped_late=self._scheduler.skipped_late,
            rechecked=self._scheduler.rechecked,
            skipped_rechecks=self._scheduler.skipped_rechecks,
            dropped_at_stop=self._dropped_at_stop,
            lag_p50_ms=_ms(lag_p50),
            lag_p99_ms=_ms(lag_p99),
            lag_max_ms=_ms(lag_max),
            last_reload_at=self._last_reload_at,
            uptime_seconds=round(uptime, 1),
            shards_held=len(self._ownership.shards),
            shard_count=self._ownership.count,
            lease_statements=self._lease_statements(),
            worker_threads=self._executor.threads,
            slots_all_busy_share=round(slots.all_busy_share, 3),
            slot_wait_mean_ms=_ms(slots.waited_mean_seconds),
            slot_wait_max_ms=_ms(slots.waited_max_seconds),
            suggested_max_concurrent_http=suggested,
            service_check_concurrency=self._side_pool.limit,
            service_checks_running=self._side_pool.running,
            service_checks_waiting=self._side_pool.waiting,
            service_checks_hung=self._side_pool.hung,
            service_checks_timed_out=self._side_pool.timed_out,
        )

    def metrics_text(self) -> bytes:
        """Status and histograms in Prometheus text format."""
        return metrics.render(self._stats)

    def _reload_forever(self) -> None:
        try:
            while not self._stopping.wait(self.config.reload_interval):
                try:
                    pace = Pacer(RELOAD_SHARE)
                    targets = self._load_changes(pace)
                    if targets is None:
                        self._last_reload_at = datetime.now(UTC)
                    else:
                        self._apply_reload(targets)
                except Exception:
                    logger.exception("Reload failed; the next one may succeed")
                    self._source.close()
        finally:
            self._source.close()


def _shard_list(shards: list[int]) -> str:
    shown = ", ".join(str(shard) for shard in shards[:20])
    return shown + (", ..." if len(shards) > 20 else "")


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)
