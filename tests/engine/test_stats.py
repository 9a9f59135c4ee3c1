from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import pytest

from polling.engine.stats import PollStats
from tests.support.outcomes import outcome


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_counts_polls_by_outcome():
    stats = PollStats()
    for project_id, up in ((1, True), (2, True), (1, False)):
        stats.record(outcome(project_id, up=up), duration_seconds=0.1)
    assert (stats.total, stats.up, stats.down) == (3, 2, 1)
    assert stats.last_up == {1: False, 2: True}


def test_lag_percentiles_cover_the_last_minute_only():
    clock = Clock()
    stats = PollStats(clock=clock)
    stats.record(late(9.0), duration_seconds=0.1)  # soon older than a minute
    clock.now += 61
    for lag in range(1, 101):
        stats.record(late(lag / 1000), duration_seconds=0.1)
    p50, p99, top = stats.lag_percentiles(50, 99, 100)
    assert (p50, p99, top) == (0.051, 0.1, 0.1)


def test_no_polls_means_no_lag():
    assert PollStats().lag_percentiles(50, 99) == [None, None]


def test_histograms_are_exported_for_prometheus():
    stats = PollStats()
    stats.record(late(0.02), duration_seconds=0.3)
    samples = {
        (s.name, s.labels.get("le")): s.value
        for metric in stats.registry.collect()
        for s in metric.samples
    }
    assert samples[("poller_scheduling_lag_seconds_bucket", "0.025")] == 1
    assert samples[("poller_scheduling_lag_seconds_bucket", "0.01")] == 0
    assert samples[("poller_poll_duration_seconds_bucket", "0.5")] == 1
    assert samples[("poller_poll_duration_seconds_bucket", "0.25")] == 0


def test_every_per_poll_series_is_labelled_with_the_pollers_region():
    stats = PollStats(region="eu")
    stats.record(late(0.02), duration_seconds=0.3)
    regions = {
        s.labels.get("region")
        for metric in stats.registry.collect()
        for s in metric.samples
    }
    assert regions == {"eu"}


def late(seconds: float):
    """An outcome that started `seconds` after it was due."""
    on_time = outcome(1)
    return replace(on_time, started_at=on_time.due_at + timedelta(seconds=seconds))


def test_polls_recorded_by_many_threads_are_all_counted():
    stats = PollStats()

    def record_many(up: bool) -> None:
        for _ in range(500):
            stats.record(outcome(1, up=up), duration_seconds=0.1)

    threads = [
        threading.Thread(target=record_many, args=(n % 2 == 0,)) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (stats.total, stats.up, stats.down) == (4000, 2000, 2000)
    assert stats.lag_percentiles(50) == [0.0]
    lag, duration = stats.histograms()
    assert sum(lag.counts) == sum(duration.counts) == 4000
    assert duration.sum == pytest.approx(400.0)
