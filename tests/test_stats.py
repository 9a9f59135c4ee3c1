from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from polling.engine.stats import PollStats
from tests.outcomes import outcome


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


def late(seconds: float):
    """An outcome that started `seconds` after it was due."""
    on_time = outcome(1)
    return replace(on_time, started_at=on_time.due_at + timedelta(seconds=seconds))
