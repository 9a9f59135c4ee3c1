"""Whether the concurrency limit, not the targets, is what delays polls.

The executor tells SlotUsage when every slot becomes busy and when one is
free again, how long each task waited in the queue before a worker took
it, and how long each poll took. Over the last minute that gives the
share of the time all slots were busy, how long polls waited for one,
and, by Little's law (slots needed = polls per second x seconds a poll
holds its slot), the limit that would have let them start on time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

WINDOW_SECONDS = 60
# A limit suggested is this much above the slots the load needs: at 100 %
# the queue of due polls grows without bound (docs/polling.md).
HEADROOM = 1.25
# Busy for at least this share of the minute, the limit is delaying polls.
DELAYING_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class SlotReport:
    """The last minute (or less, just after a start)."""

    seconds: float  # how much of the last minute this covers
    all_busy_share: float  # of it, with every slot busy
    polls: int  # tasks taken from the queue
    waited_mean_seconds: float  # in the queue, before a worker took them
    waited_max_seconds: float
    poll_mean_seconds: float  # how long a poll held its slot

    def delaying(self) -> bool:
        """Whether the limit, not the targets, held polls back."""
        return self.all_busy_share >= DELAYING_SHARE

    def suggested_limit(
        self, limit: int, polls_per_second: float, ceiling: int
    ) -> int | None:
        """The limit to set so that polls due at `polls_per_second` start
        on time, rounded up to a hundred, at most `ceiling`; None while the
        limit is not what delays them. Never less than twice the current
        limit: a full limit caps the rate polls are seen at, and so the
        estimate."""
        if not self.delaying():
            return None
        needed = polls_per_second * self.poll_mean_seconds * HEADROOM
        return min(max(math.ceil(needed / 100) * 100, 2 * limit), ceiling)


class _Second:
    __slots__ = ("busy", "ended", "polls", "second", "waited", "waited_max", "worked")

    def __init__(self, second: int) -> None:
        self.second = second
        self.busy = 0.0  # seconds every slot was busy within it
        self.polls = 0
        self.waited = 0.0
        self.waited_max = 0.0
        self.ended = 0
        self.worked = 0.0  # seconds the polls ended within it took


class SlotUsage:
    """Per-second tallies over the last minute. Not thread-safe: the
    executor calls it with its lock held."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = clock()
        self._seconds = [_Second(-1) for _ in range(WINDOW_SECONDS)]
        self._full_since: float | None = None

    def all_busy(self, full: bool) -> None:
        """Every slot is taken now (True), or one is free again (False)."""
        now = self._clock()
        if full:
            if self._full_since is None:
                self._full_since = now
        elif self._full_since is not None:
            self._add_busy(self._full_since, now)
            self._full_since = None

    def taken(self, waited_seconds: float) -> None:
        """A worker took a task that had been queued this long."""
        second = self._second(self._clock())
        second.polls += 1
        second.waited += waited_seconds
        second.waited_max = max(second.waited_max, waited_seconds)

    def ended(self, seconds: float) -> None:
        """A poll that held its slot this long ended."""
        second = self._second(self._clock())
        second.worked += seconds
        second.ended += 1

    def report(self) -> SlotReport:
        now = self._clock()
        if self._full_since is not None:
            self._add_busy(self._full_since, now)
            self._full_since = now
        # The window: the seconds of the last minute, the current one
        # (begun) included.
        first = int(now) - WINDOW_SECONDS + 1
        window = [s for s in self._seconds if s.second >= first]
        covered = now - max(self._started, first)
        busy = sum(s.busy for s in window)
        polls = sum(s.polls for s in window)
        worked = sum(s.worked for s in window)
        ended = sum(s.ended for s in window)
        return SlotReport(
            seconds=round(covered, 1),
            all_busy_share=min(busy / covered, 1.0) if covered > 0 else 0.0,
            polls=polls,
            waited_mean_seconds=sum(s.waited for s in window) / polls if polls else 0.0,
            waited_max_seconds=max((s.waited_max for s in window), default=0.0),
            poll_mean_seconds=worked / ended if ended else 0.0,
        )

    def _second(self, at: float) -> _Second:
        number = int(at)
        second = self._seconds[number % WINDOW_SECONDS]
        if second.second != number:
            second = self._seconds[number % WINDOW_SECONDS] = _Second(number)
        return second

    def _add_busy(self, begin: float, end: float) -> None:
        """Spread a busy stretch over the seconds it covers (only those of
        the last minute count)."""
        begin = max(begin, int(end) - WINDOW_SECONDS + 1)
        while begin < end:
            boundary = min(math.floor(begin) + 1, end)
            self._second(begin).busy += boundary - begin
            begin = boundary
