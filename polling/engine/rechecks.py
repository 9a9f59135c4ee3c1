"""Reactive rescheduling: which projects to poll again soon.

A failing project not yet confirmed down, and a down one that has started
to recover but not yet reached its recovery threshold, are polled again
after min(interval, recheck seconds) instead of a whole interval, so a
project polled every 5 minutes is confirmed down within about a minute.

This is only the scheduler's hint of when to poll next. Whether a project
is down is decided by the result writer, from the database; after a
restart these counts start from zero, which costs at most a few extra
polls.
"""

from __future__ import annotations

from dataclasses import dataclass

from polling.engine.types import Target


@dataclass(slots=True)
class _Streak:
    failures: int = 0
    successes: int = 0
    confirmed: bool = False  # the failure threshold was reached

    @property
    def idle(self) -> bool:
        return not self.failures and not self.confirmed


class Rechecks:
    def __init__(self) -> None:
        # Only projects with a streak worth remembering are kept.
        self._streaks: dict[int, _Streak] = {}

    def __len__(self) -> int:
        return len(self._streaks)

    def __contains__(self, project_id: object) -> bool:
        """Whether the project has a streak (a success would change it)."""
        return project_id in self._streaks

    def wanted(self, target: Target, up: bool) -> bool:
        """Note a poll's outcome; True when the project should be polled
        again soon."""
        streak = self._streaks.get(target.project_id) or _Streak()
        again = _after_success(streak, target) if up else _after_failure(streak, target)
        if streak.idle:
            self._streaks.pop(target.project_id, None)
        else:
            self._streaks[target.project_id] = streak
        return again

    def forget(self, project_id: int) -> None:
        self._streaks.pop(project_id, None)


def _after_failure(streak: _Streak, target: Target) -> bool:
    streak.successes = 0
    if streak.confirmed:
        return False
    streak.failures += 1
    if streak.failures >= target.failure_threshold:
        streak.confirmed = True
        return False
    return True


def _after_success(streak: _Streak, target: Target) -> bool:
    streak.failures = 0
    if not streak.confirmed:
        return False
    streak.successes += 1
    if streak.successes >= target.recovery_threshold:
        streak.confirmed = False
        streak.successes = 0
        return False
    return True
