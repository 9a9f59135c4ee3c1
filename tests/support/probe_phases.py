"""One poll of a URL on a handle, and a clock for the transport's
certificate refresh."""

from __future__ import annotations

from datetime import UTC, datetime

from polling.engine.types import Outcome, Target, Task
from tests.support.executor_probe import run_poll


def poll(handle, url: str, **fields) -> Outcome:
    return run_poll(handle, Task(Target(project_id=3, url=url, **fields), now_utc()))


def now_utc() -> datetime:
    return datetime.now(UTC)


class FakeClock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now
