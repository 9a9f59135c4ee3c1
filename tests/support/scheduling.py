"""A scheduler on a clock that moves only when told to, and what it
put on its task queue."""

from __future__ import annotations

import queue
from datetime import UTC, datetime, timedelta

from polling.engine.scheduler import Scheduler
from polling.engine.types import Target

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class FakeClock:
    """Monotonic and wall clocks that move only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return START + timedelta(seconds=self.now - 1000.0)

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_scheduler(clock: FakeClock, *, maxsize: int = 0, spread: float = 60):
    tasks: queue.Queue = queue.Queue(maxsize)
    scheduler = Scheduler(
        tasks, spread_seconds=spread, clock=clock.monotonic, wall_clock=clock.wall
    )
    return scheduler, tasks


def drain(tasks: queue.Queue) -> list:
    items = []
    while not tasks.empty():
        items.append(tasks.get_nowait())
    return items


def target(project_id: int, interval: float = 10, url: str = "http://127.0.0.1/"):
    return Target(project_id=project_id, url=url, interval_seconds=interval)
