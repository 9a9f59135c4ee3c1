"""The poller's state in Prometheus text format, for GET /metrics."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from polling.engine.stats import PollStats
from polling.engine.status import PollerStatus

GAUGES = [
    ("poller_projects", "active_projects", "Projects being polled."),
    ("poller_polls_in_flight", "polls_in_flight", "Polls running now."),
    ("poller_max_concurrent_http", "max_concurrent_http", "Concurrency limit."),
    ("poller_task_queue_depth", "task_queue_depth", "Due polls waiting for a worker."),
    (
        "poller_result_queue_depth",
        "result_queue_depth",
        "Results waiting for the writer.",
    ),
    (
        "poller_results_pending_write",
        "results_pending_write",
        "Results polled but not yet in the database.",
    ),
    (
        "poller_shards_held",
        "shards_held",
        "Shards of the projects this poller holds (1 of 1 when alone).",
    ),
    ("poller_shards", "shard_count", "Shards the projects fall into."),
    ("poller_worker_threads", "worker_threads", "Worker threads running."),
    (
        "poller_slots_all_busy_ratio",
        "slots_all_busy_share",
        "Share of the last minute every slot (MAX_CONCURRENT_HTTP) was busy.",
    ),
    (
        "poller_slot_wait_seconds",
        "slot_wait_mean_seconds",
        "Mean time due polls waited for a free slot over the last minute.",
    ),
    (
        "poller_slot_wait_max_seconds",
        "slot_wait_max_seconds",
        "Longest time a due poll waited for a free slot over the last minute.",
    ),
    (
        "poller_limit_delays_polls",
        "limit_delays_polls",
        "1 when the concurrency limit, not the targets, delays polls.",
    ),
    (
        "poller_suggested_max_concurrent_http",
        "suggested_limit",
        "The MAX_CONCURRENT_HTTP that would let polls start on time; "
        "the current limit when it does not delay them.",
    ),
]
COUNTERS = [
    ("poller_results_written", "results_written", "Results saved to the database."),
    (
        "poller_failed_writes",
        "failed_writes",
        "Batch writes that failed and were retried.",
    ),
    (
        "poller_results_rejected",
        "results_rejected",
        "Results the database refused (bad data); logged and set aside.",
    ),
    (
        "poller_results_unsaved",
        "results_unsaved",
        "Results still unsaved when a stop ran out of time.",
    ),
    ("poller_skipped_ticks", "skipped_ticks", "Due polls skipped (busy or late)."),
    ("poller_rechecks", "rechecked", "Re-checks of failing projects made."),
    (
        "poller_rechecks_skipped",
        "skipped_rechecks",
        "Re-checks skipped because half the slots were busy.",
    ),
    (
        "poller_lease_statements",
        "lease_statements",
        "Statements run to hold shard leases (renewals, releases, fences).",
    ),
]


class PollerCollector:
    """Reads the coordinator's status at scrape time, so the numbers are the
    same ones /status shows."""

    def __init__(
        self,
        status: Callable[[], PollerStatus],
        project_ids: Callable[[], set[int]],
        stats: PollStats,
    ) -> None:
        self._status = status
        self._project_ids = project_ids
        self._stats = stats

    def collect(self) -> Iterator[Metric]:
        status = self._status()
        region = self._stats.region
        polls = CounterMetricFamily(
            "poller_polls", "Polls made, by outcome.", labels=["outcome", "region"]
        )
        polls.add_metric(["up", region], status.polls_up)
        polls.add_metric(["down", region], status.polls_down)
        yield polls
        values = _derived(status)
        for name, field, documentation in GAUGES:
            value = values[field] if field in values else getattr(status, field)
            yield GaugeMetricFamily(name, documentation, value=value)
        for name, field, documentation in COUNTERS:
            yield CounterMetricFamily(name, documentation, value=getattr(status, field))
        yield self._project_up()

    def _project_up(self) -> GaugeMetricFamily:
        gauge = GaugeMetricFamily(
            "poller_project_up",
            "1 when the project's latest poll was up, 0 when down.",
            labels=["project_id", "region"],
        )
        scheduled, region = self._project_ids(), self._stats.region
        for project_id, up in sorted(self._stats.last_up.copy().items()):
            if project_id in scheduled:
                gauge.add_metric([str(project_id), region], 1 if up else 0)
        return gauge


def _derived(status: PollerStatus) -> dict[str, float]:
    """Gauges computed from the status: seconds, and 0/1 for a flag."""
    return {
        "slot_wait_mean_seconds": status.slot_wait_mean_ms / 1000,
        "slot_wait_max_seconds": status.slot_wait_max_ms / 1000,
        "limit_delays_polls": 1 if status.limit_delays_polls else 0,
        "suggested_limit": status.suggested_max_concurrent_http
        or status.max_concurrent_http,
    }


def render(stats: PollStats) -> bytes:
    return generate_latest(stats.registry)
