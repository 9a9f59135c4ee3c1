"""The Coordinator owns the poller's parts and wires them together.

scheduler ──▶ task queue ──▶ executor ──▶ result queue ──▶ writer ──▶ DB
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from datetime import UTC, datetime
from typing import Protocol

from polling.engine import metrics
from polling.engine import probe as probing
from polling.engine.config import PollerConfig
from polling.engine.executor import Executor
from polling.engine.scheduler import ReloadSummary, Scheduler
from polling.engine.stats import PollStats
from polling.engine.types import RunState, Target
from polling.engine.writer import ResultStore, ResultWriter

logger = logging.getLogger(__name__)


class TargetSource(Protocol):
    """Where the projects to poll come from (the database, in runpoller)."""

    def load_all(self) -> list[Target]:
        """Every project that should be polled."""

    def load_one(self, project_id: int) -> Target | None:
        """The project as a target, or None when it should not be polled."""

    def close(self) -> None:
        """Release what the calling thread holds (its database connection)."""


class Coordinator:
    def __init__(
        self,
        config: PollerConfig,
        *,
        source: TargetSource,
        store: ResultStore,
    ) -> None:
        self.config = config
        self._source = source
        self._state = RunState.NEW
        self._state_lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._stopping = threading.Event()
        self._stats = PollStats()
        self._task_queue: queue.Queue = queue.Queue(config.task_queue_size)
        self._result_queue: queue.Queue = queue.Queue(config.result_queue_size)
        self._scheduler = Scheduler(
            self._task_queue, spread_seconds=config.spread_seconds
        )
        self._executor = Executor(
            self._task_queue,
            self._result_queue,
            limit=config.max_concurrent_http,
            probe=probing.probe,
            make_handle=probing.make_handle,
            on_finished=self._scheduler.poll_finished,
            stats=self._stats,
        )
        self._writer = ResultWriter(
            self._result_queue,
            store,
            batch_size=config.write_batch_size,
            batch_seconds=config.write_batch_seconds,
        )
        self._stats.registry.register(
            metrics.PollerCollector(
                self.status, self._scheduler.project_ids, self._stats
            )
        )
        self._reloader: threading.Thread | None = None
        self._started_at: float | None = None
        self._last_reload_at: datetime | None = None
        self.dropped_at_stop = 0

    @property
    def state(self) -> RunState:
        return self._state

    def start(self) -> None:
        with self._state_lock:
            if self._state is not RunState.NEW:
                raise RuntimeError(
                    f"cannot start a coordinator that is {self._state.value}"
                )
            self._state = RunState.STARTING
        self._started_at = time.monotonic()
        # Load before starting threads: if the database is down, nothing
        # is left running.
        targets = self._source.load_all()
        self._writer.start()
        self._executor.start()
        summary = self._apply_reload(targets)
        self._scheduler.start()
        self._reloader = threading.Thread(
            target=self._reload_forever, name="poller-reloader"
        )
        self._reloader.start()
        self._state = RunState.RUNNING
        logger.info("Poller started with %d projects", summary.added)

    def stop(self, timeout: float | None = None) -> None:
        """Stop in dependency order: no new polls, let running polls finish,
        save every result, then end. Safe to call twice."""
        with self._state_lock:
            if self._state in (RunState.STOPPING, RunState.STOPPED, RunState.NEW):
                return
            self._state = RunState.STOPPING
        deadline = None if timeout is None else time.monotonic() + timeout
        self._stopping.set()
        self._scheduler.stop(_left(deadline))
        if self._reloader:
            self._reloader.join(_left(deadline))
        self.dropped_at_stop = self._executor.stop(_left(deadline))
        # Only now can the writer tell that nothing more will arrive.
        self._writer.stop(_left(deadline))
        self._state = RunState.STOPPED

    # Changing what is polled

    def add_project(self, target: Target) -> bool:
        """Poll this project from now on (at once if it is new)."""
        return self._scheduler.add(target)

    def remove_project(self, project_id: int) -> bool:
        return self._scheduler.remove(project_id)

    def sync_project(self, project_id: int) -> str:
        """Read one project from the database and follow it: add or update
        it when enabled, remove it when disabled or deleted. Returns what
        happened: "added", "updated" or "removed" (or "absent")."""
        target = self._source.load_one(project_id)
        if target is not None:
            return "added" if self.add_project(target) else "updated"
        return "removed" if self.remove_project(project_id) else "absent"

    def reload_projects(self) -> ReloadSummary:
        """Make the polled set match the enabled projects in the database."""
        return self._apply_reload(self._source.load_all())

    def _apply_reload(self, targets: list[Target]) -> ReloadSummary:
        with self._reload_lock:
            summary = self._scheduler.replace_all(targets)
            self._last_reload_at = datetime.now(UTC)
        logger.info(
            "Reloaded projects: %d added, %d updated, %d removed",
            summary.added,
            summary.updated,
            summary.removed,
        )
        return summary

    def scale_to(self, limit: int) -> None:
        self._executor.scale_to(limit)
        logger.info("Concurrency limit is now %d", limit)

    # Reading

    def status(self) -> dict:
        lag_p50, lag_p99, lag_max = self._stats.lag_percentiles(50, 99, 100)
        uptime = (
            0.0 if self._started_at is None else time.monotonic() - self._started_at
        )
        return {
            "state": self._state.value,
            "active_projects": self._scheduler.project_count,
            "polls_total": self._stats.total,
            "polls_up": self._stats.up,
            "polls_down": self._stats.down,
            "polls_in_flight": self._executor.in_flight,
            "max_concurrent_http": self._executor.limit,
            "task_queue_depth": self._task_queue.qsize(),
            "result_queue_depth": self._result_queue.qsize(),
            "results_pending_write": self._result_queue.qsize() + self._writer.pending,
            "results_written": self._writer.written,
            "failed_writes": self._writer.failed_writes,
            "skipped_ticks": self._scheduler.skipped_busy
            + self._scheduler.skipped_late,
            "skipped_busy": self._scheduler.skipped_busy,
            "skipped_late": self._scheduler.skipped_late,
            "lag_p50_ms": _ms(lag_p50),
            "lag_p99_ms": _ms(lag_p99),
            "lag_max_ms": _ms(lag_max),
            "last_reload_at": self._last_reload_at.isoformat()
            if self._last_reload_at
            else None,
            "uptime_seconds": round(uptime, 1),
        }

    def metrics_text(self) -> bytes:
        """Status and histograms in Prometheus text format."""
        return metrics.render(self._stats)

    def _reload_forever(self) -> None:
        try:
            while not self._stopping.wait(self.config.reload_interval):
                try:
                    self.reload_projects()
                except Exception:
                    logger.exception("Reload failed; the next one may succeed")
                    self._source.close()
        finally:
            self._source.close()


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)
