"""Error-budget arithmetic over counts of good and bad polls: pure
functions, so each formula in docs/objectives.md is one function here.

`target` is a percentage (99.9); the error budget is the share of polls
allowed to be bad, 1 - target/100.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, slots=True)
class Counts:
    """Polls counted by an objective in some window, and the good ones."""

    good: int = 0
    total: int = 0

    @property
    def bad(self) -> int:
        return self.total - self.good


def budget_share(target: float) -> float:
    """The share of counted polls allowed to be bad: 1 - target/100."""
    return 1 - target / 100


def attainment_percent(counts: Counts) -> float | None:
    """100 · good / total; None with nothing counted."""
    return None if not counts.total else 100 * counts.good / counts.total


def budget_remaining_percent(counts: Counts, target: float) -> float:
    """100 · (1 - bad / (budget share · total)): 100 with nothing counted,
    below 0 once the budget is spent."""
    if not counts.total:
        return 100.0
    return 100 * (1 - counts.bad / (budget_share(target) * counts.total))


def burn_rate(counts: Counts, target: float) -> float | None:
    """(bad / total) / budget share: 1 spends the budget exactly over the
    window; None with nothing counted."""
    if not counts.total:
        return None
    return counts.bad / counts.total / budget_share(target)


def budget_minutes(target: float, window: timedelta) -> float:
    """The budget in minutes of full outage: the window's minutes times the
    budget share."""
    return window.total_seconds() / 60 * budget_share(target)


def time_left(remaining_percent: float, rate: float | None, window: timedelta):
    """How long the budget lasts at `rate`: the remaining share of it
    times the window, over the rate (at rate 1 a whole budget lasts one
    window). timedelta(0) when it is spent; None when nothing burns."""
    if remaining_percent <= 0:
        return timedelta(0)
    if not rate:
        return None
    return window * (remaining_percent / 100) / rate
