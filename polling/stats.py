"""Counters the executor updates and status() reads, safe across threads."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

LAG_WINDOW_SECONDS = 60


class PollStats:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._lags: deque[tuple[float, float]] = deque()
        self.total = 0
        self.up = 0
        self.down = 0

    def record(self, *, up: bool, lag_seconds: float) -> None:
        now = self._clock()
        with self._lock:
            self.total += 1
            if up:
                self.up += 1
            else:
                self.down += 1
            self._lags.append((now, lag_seconds))
            self._forget_before(now - LAG_WINDOW_SECONDS)

    def lag_percentiles(self, *percentiles: float) -> list[float | None]:
        """Scheduling lag (started minus due) over the last minute, in
        seconds; None for each percentile when nothing was polled."""
        with self._lock:
            self._forget_before(self._clock() - LAG_WINDOW_SECONDS)
            lags = sorted(lag for _, lag in self._lags)
        if not lags:
            return [None for _ in percentiles]
        return [lags[min(len(lags) - 1, int(p / 100 * len(lags)))] for p in percentiles]

    def _forget_before(self, cutoff: float) -> None:
        while self._lags and self._lags[0][0] < cutoff:
            self._lags.popleft()
