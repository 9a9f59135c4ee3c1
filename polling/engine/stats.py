"""Counters the executor updates and status() and /metrics read, safe
across threads."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry, Histogram

from polling.engine.types import Outcome

LAG_WINDOW_SECONDS = 60
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


def percentile(ordered: Sequence[float], percent: float) -> float:
    """The value below which `percent` % of a sorted, non-empty sequence
    lies (nearest rank; 100 gives the maximum)."""
    return ordered[min(len(ordered) - 1, int(percent / 100 * len(ordered)))]


class PollStats:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._lags: deque[tuple[float, float]] = deque()
        self.total = 0
        self.up = 0
        self.down = 0
        # Whether each project's latest poll was up, for a per-project gauge.
        self.last_up: dict[int, bool] = {}
        self.registry = CollectorRegistry(auto_describe=False)
        self._lag_histogram = Histogram(
            "poller_scheduling_lag_seconds",
            "How late polls started: started minus due.",
            buckets=LAG_BUCKETS,
            registry=self.registry,
        )
        self._duration_histogram = Histogram(
            "poller_poll_duration_seconds",
            "How long polls took, failures included.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )

    def record(self, outcome: Outcome, *, duration_seconds: float) -> None:
        now = self._clock()
        lag = outcome.lag_seconds
        with self._lock:
            self.total += 1
            if outcome.up:
                self.up += 1
            else:
                self.down += 1
            self.last_up[outcome.project_id] = outcome.up
            self._lags.append((now, lag))
            self._forget_before(now - LAG_WINDOW_SECONDS)
        self._lag_histogram.observe(max(lag, 0.0))
        self._duration_histogram.observe(duration_seconds)

    def lag_percentiles(self, *percentiles: float) -> list[float | None]:
        """Scheduling lag (started minus due) over the last minute, in
        seconds; None for each percentile when nothing was polled."""
        with self._lock:
            self._forget_before(self._clock() - LAG_WINDOW_SECONDS)
            window = list(self._lags)
        # Sorted outside the lock: at 5,000 polls/s the window holds 300,000
        # lags, and every worker records into it.
        lags = sorted(lag for _, lag in window)
        if not lags:
            return [None for _ in percentiles]
        return [percentile(lags, p) for p in percentiles]

    def _forget_before(self, cutoff: float) -> None:
        while self._lags and self._lags[0][0] < cutoff:
            self._lags.popleft()
