"""Counters the executor updates and status() and /metrics read, safe
across threads.

Every worker thread records into a shard of its own: at thousands of polls
a second, one lock shared by every worker was waited on by a fifth of them
at any moment. A shard's lock is only ever contended by a reader.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.utils import floatToGoString

from polling.engine.types import Outcome

LAG_WINDOW_SECONDS = 60
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


def percentile(ordered: Sequence[float], percent: float) -> float:
    """The value below which `percent` % of a sorted, non-empty sequence
    lies (nearest rank; 100 gives the maximum)."""
    return ordered[min(len(ordered) - 1, int(percent / 100 * len(ordered)))]


class _Histogram:
    """Prometheus histogram counts: one per bucket (its upper bound
    included, as Prometheus's `le`), the last for +Inf, and the sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def add(self, other: _Histogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sum += other.sum


class _Shard:
    """What one thread recorded. Only that thread writes it."""

    __slots__ = ("down", "duration", "lag", "lags", "lock", "times", "up")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.up = 0
        self.down = 0
        # Parallel deques, so the lags of the last minute sort in C.
        self.times: deque[float] = deque()
        self.lags: deque[float] = deque()
        self.lag = _Histogram(LAG_BUCKETS)
        self.duration = _Histogram(DURATION_BUCKETS)

    def forget_before(self, cutoff: float) -> None:
        """Drop lags recorded before `cutoff`. Caller holds the lock."""
        times, lags = self.times, self.lags
        while times and times[0] < cutoff:
            times.popleft()
            lags.popleft()


class PollStats:
    """`region` labels every per-poll series on /metrics (docs/regions.md):
    pollers of several regions scraped into one Prometheus stay apart."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, region: str = "default"
    ) -> None:
        self._clock = clock
        self.region = region
        self._local = threading.local()
        self._shards: list[_Shard] = []
        self._shards_lock = threading.Lock()
        # Whether each project's latest poll was up, for a per-project gauge.
        # One item set per poll is atomic, so it needs no shard.
        self.last_up: dict[int, bool] = {}
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_HistogramCollector(self))

    def record(self, outcome: Outcome, *, duration_seconds: float) -> None:
        now = self._clock()
        lag = outcome.lag_seconds
        shard = self._own_shard()
        with shard.lock:
            if outcome.up:
                shard.up += 1
            else:
                shard.down += 1
            shard.times.append(now)
            shard.lags.append(lag)
            shard.forget_before(now - LAG_WINDOW_SECONDS)
            shard.lag.observe(max(lag, 0.0))
            shard.duration.observe(duration_seconds)
        self.last_up[outcome.project_id] = outcome.up

    @property
    def up(self) -> int:
        return sum(shard.up for shard in self._all_shards())

    @property
    def down(self) -> int:
        return sum(shard.down for shard in self._all_shards())

    @property
    def total(self) -> int:
        return sum(shard.up + shard.down for shard in self._all_shards())

    def lag_percentiles(self, *percentiles: float) -> list[float | None]:
        """Scheduling lag (started minus due) over the last minute, in
        seconds; None for each percentile when nothing was polled."""
        cutoff = self._clock() - LAG_WINDOW_SECONDS
        window: list[float] = []
        for shard in self._all_shards():
            with shard.lock:
                shard.forget_before(cutoff)
                window += shard.lags
        # Sorted outside the locks: at 5,000 polls/s the window holds
        # 300,000 lags.
        window.sort()
        if not window:
            return [None for _ in percentiles]
        return [percentile(window, p) for p in percentiles]

    def histograms(self) -> tuple[_Histogram, _Histogram]:
        """The lag and duration histograms, every thread's added up."""
        lag, duration = _Histogram(LAG_BUCKETS), _Histogram(DURATION_BUCKETS)
        for shard in self._all_shards():
            with shard.lock:
                lag.add(shard.lag)
                duration.add(shard.duration)
        return lag, duration

    def _own_shard(self) -> _Shard:
        try:
            return self._local.shard
        except AttributeError:
            shard = self._local.shard = _Shard()
            with self._shards_lock:
                self._shards.append(shard)
            return shard

    def _all_shards(self) -> list[_Shard]:
        with self._shards_lock:
            return list(self._shards)


class _HistogramCollector:
    def __init__(self, stats: PollStats) -> None:
        self._stats = stats

    def collect(self) -> Iterator[HistogramMetricFamily]:
        lag, duration = self._stats.histograms()
        region = self._stats.region
        yield _family(
            "poller_scheduling_lag_seconds",
            "How late polls started: started minus due.",
            lag,
            region,
        )
        yield _family(
            "poller_poll_duration_seconds",
            "How long polls took, failures included.",
            duration,
            region,
        )


def _family(name: str, documentation: str, histogram: _Histogram, region: str):
    bounds = [*histogram.bounds, float("inf")]
    cumulative, buckets = 0, []
    for bound, count in zip(bounds, histogram.counts, strict=True):
        cumulative += count
        buckets.append((floatToGoString(bound), cumulative))
    family = HistogramMetricFamily(name, documentation, labels=["region"])
    family.add_metric([region], buckets=buckets, sum_value=histogram.sum)
    return family
