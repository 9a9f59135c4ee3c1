"""The plain values the poller's threads pass to each other.

Nothing here imports Django, so the engine can be tested without a database.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Target:
    """Everything one poll of a project needs, frozen at load time."""

    project_id: int
    url: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    expected_status: int = 200
    interval_seconds: float = 300
    timeout_seconds: float = 10


@dataclass(frozen=True, slots=True)
class Task:
    """A poll that is due: the scheduler puts these on the task queue."""

    target: Target
    due_at: datetime  # wall clock, UTC


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one poll found. `error` is empty exactly when `up` is true."""

    project_id: int
    up: bool
    started_at: datetime  # wall clock, UTC
    due_at: datetime  # wall clock, UTC
    status_code: int | None = None
    response_time_ms: int | None = None
    error: str = ""

    @property
    def lag_seconds(self) -> float:
        """How late the poll started: started minus due."""
        return (self.started_at - self.due_at).total_seconds()


class RunState(enum.Enum):
    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
