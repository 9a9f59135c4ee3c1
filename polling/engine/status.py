"""PollerStatus: the one definition of what a running poller reports.

/status serves it as JSON, /metrics reads its fields, the poller page and
its health levels read it back from that JSON, and runpoller logs it as a
line of prose and prints it as a JSON line when it stops.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class PollerStatus:
    state: str
    active_projects: int
    polls_total: int
    polls_up: int
    polls_down: int
    polls_in_flight: int
    max_concurrent_http: int
    task_queue_depth: int
    result_queue_depth: int
    # Polled but not yet in the store: queued for the writer or in its batch.
    results_pending_write: int
    results_written: int
    # Results the store refused (bad data); logged and set aside.
    results_rejected: int
    # Results still unsaved when stop() ran out of time; logged.
    results_unsaved: int
    # Batch writes that failed because the store was unreachable, and were
    # retried.
    failed_writes: int
    skipped_busy: int
    skipped_late: int
    # Due polls still queued when the poller stopped: never started.
    dropped_at_stop: int
    lag_p50_ms: float | None
    lag_p99_ms: float | None
    lag_max_ms: float | None
    last_reload_at: datetime | None
    uptime_seconds: float
    # Re-checks of failing projects made, and skipped because half the
    # slots were busy (scheduler.py).
    rechecked: int = 0
    skipped_rechecks: int = 0
    # Shards this poller holds, of how many (1 of 1 when it polls alone).
    shards_held: int = 1
    shard_count: int = 1
    # Statements run to share the projects with other pollers: lease
    # renewals and releases, and the writer's fence (one per batch).
    lease_statements: int = 0
    # Worker threads running now: as many as the polls in flight need.
    worker_threads: int = 0
    # Over the last minute (engine/slots.py): the share of it every slot
    # was busy (0-1), how long due polls waited in the queue for a worker
    # (mean and longest), and, when the limit is what delays polls, the
    # MAX_CONCURRENT_HTTP that would let them start on time.
    slots_all_busy_share: float = 0.0
    slot_wait_mean_ms: float = 0.0
    slot_wait_max_ms: float = 0.0
    suggested_max_concurrent_http: int | None = None
    # The side pool (engine/side_pool.py): checks that need a blocking
    # driver. Its limit (SERVICE_CHECK_CONCURRENCY), checks running and
    # waiting for a slot now, driver threads abandoned at their deadline
    # that still hang, and checks given up on at their deadline in all.
    service_check_concurrency: int = 0
    service_checks_running: int = 0
    service_checks_waiting: int = 0
    service_checks_hung: int = 0
    service_checks_timed_out: int = 0

    @property
    def limit_delays_polls(self) -> bool:
        """Whether the concurrency limit, not the targets, delays polls."""
        return self.suggested_max_concurrent_http is not None

    def limit_advice(self) -> str:
        """What the limit does to polls, in one sentence."""
        busy = f"{self.slots_all_busy_share * 100:.0f} %"
        limit = self.max_concurrent_http
        slots = "the 1 slot was" if limit == 1 else f"all {limit} slots were"
        if not self.limit_delays_polls:
            return (
                f"The limit does not delay polls: {slots} busy {busy} of the "
                "last minute."
            )
        if self.suggested_max_concurrent_http > self.max_concurrent_http:
            remedy = f"set MAX_CONCURRENT_HTTP to {self.suggested_max_concurrent_http}"
        else:
            remedy = "run another poller (runpoller --processes, PostgreSQL)"
        return (
            f"The limit delays polls: {slots} busy {busy} of the last minute; "
            "polls waited "
            f"{self.slot_wait_mean_ms / 1000:.1f} s on average "
            f"(at most {self.slot_wait_max_ms / 1000:.1f} s) for a free slot; "
            f"{remedy}."
        )

    @property
    def skipped_ticks(self) -> int:
        return self.skipped_busy + self.skipped_late

    def to_json(self) -> dict:
        """A dict of JSON values: datetimes as ISO 8601 strings."""
        data = dataclasses.asdict(self)
        if self.last_reload_at is not None:
            data["last_reload_at"] = self.last_reload_at.isoformat()
        data["skipped_ticks"] = self.skipped_ticks
        return data

    @classmethod
    def from_json(cls, data: dict) -> PollerStatus:
        """Read to_json()'s output back; fields a newer or older poller
        sent that this one does not know are ignored."""
        names = {field.name for field in dataclasses.fields(cls)}
        values = {name: value for name, value in data.items() if name in names}
        if values.get("last_reload_at"):
            values["last_reload_at"] = datetime.fromisoformat(values["last_reload_at"])
        return cls(**values)

    def line(self) -> str:
        """The status in one line of prose, for the log."""
        lag = (
            "-"
            if self.lag_p99_ms is None
            else f"{self.lag_p50_ms:.0f}/{self.lag_p99_ms:.0f} ms"
        )
        return (
            f"{self.active_projects} projects, "
            f"{self.polls_total} polls ({self.polls_up} up, {self.polls_down} down), "
            f"{self.polls_in_flight}/{self.max_concurrent_http} in flight, "
            f"queues {self.task_queue_depth}/{self.result_queue_depth}, "
            f"{self.results_written} written, "
            f"{self.results_pending_write} waiting, "
            f"{self.results_rejected} rejected, "
            f"{self.skipped_ticks} skipped, lag p50/p99 {lag}"
            + (f". {self.limit_advice()}" if self.limit_delays_polls else "")
        )
