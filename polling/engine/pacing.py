"""Keeping a long job in a poller thread to a share of the interpreter lock.

A thread that runs Python without a pause (the periodic reload reads and
builds 300,000 targets: seconds of CPU) takes the interpreter lock every
time a poll worker gives it back, and the worker, which gives it back
several times a poll, then makes a fraction of its polls. A paced job
sleeps between its steps, as long as it worked times (1 - share) / share,
so the workers have the lock to themselves for the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# The periodic reload's share. Reading 300,000 projects takes about 5 s of
# CPU, so about 50 s paced: well inside the 300 s between reloads. At 0.25
# PostgreSQL's scale-300k still saw a 2.5 s lag p99 during the reload, at
# 0.1 about 1 s (docs/BENCHMARKS.md).
RELOAD_SHARE = 0.1


class Pacer:
    """Call it between the steps of a job."""

    def __init__(
        self,
        share: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 0 < share <= 1:
            raise ValueError("the share must be above 0 and at most 1")
        self._rest_per_work = (1 - share) / share
        self._clock = clock
        self._sleep = sleep
        self._since = clock()
        self.slept = 0.0

    def __call__(self) -> None:
        rest = (self._clock() - self._since) * self._rest_per_work
        if rest > 0:
            self._sleep(rest)
            self.slept += rest
        self._since = self._clock()


def no_pause() -> None:
    """For a job that may run flat out (nothing is polling yet)."""
