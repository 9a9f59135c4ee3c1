from __future__ import annotations

from polling.stats import PollStats


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_counts_polls_by_outcome():
    stats = PollStats()
    for up in (True, True, False):
        stats.record(up=up, lag_seconds=0.0)
    assert (stats.total, stats.up, stats.down) == (3, 2, 1)


def test_lag_percentiles_cover_the_last_minute_only():
    clock = Clock()
    stats = PollStats(clock=clock)
    stats.record(up=True, lag_seconds=9.0)  # soon older than a minute
    clock.now += 61
    for lag in range(1, 101):
        stats.record(up=True, lag_seconds=lag / 1000)
    p50, p99, top = stats.lag_percentiles(50, 99, 100)
    assert (p50, p99, top) == (0.051, 0.1, 0.1)


def test_no_polls_means_no_lag():
    assert PollStats().lag_percentiles(50, 99) == [None, None]
