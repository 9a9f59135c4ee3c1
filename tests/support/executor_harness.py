"""An Executor polling a TargetServer, with the outcomes it hands on and
the polls in flight watched (the `harness` fixture)."""

from __future__ import annotations

import queue
import threading
import time
from datetime import UTC, datetime

from polling.engine.executor import Executor
from polling.engine.handoff import TaskQueue
from polling.engine.probe import make_transfers, poll_steps
from polling.engine.stats import PollStats
from polling.engine.types import Target, Task
from tests.support.waiting import wait_until


class Harness:
    """An executor wired to real queues, the real probe and a local server."""

    def __init__(self, server, *, limit: int, results_size: int = 0, **options) -> None:
        self.server = server
        self.tasks = TaskQueue(10_000)
        self.results: queue.Queue = queue.Queue(results_size)
        self.finished: list[int] = []
        self.stats = PollStats()
        self.executor = Executor(
            self.tasks,
            self.results,
            limit=limit,
            poll=poll_steps,
            make_transfers=options.pop("make_transfers", make_transfers),
            on_finished=lambda project_id, outcome: self.finished.append(project_id),
            stats=self.stats,
            **options,
        )
        self.peak_in_flight = 0
        self._watching = threading.Event()

    def submit(self, project_id: int, path: str, *, timeout: float = 5) -> None:
        target = Target(
            project_id=project_id, url=self.server.url(path), timeout_seconds=timeout
        )
        self.tasks.put(Task(target=target, due_at=datetime.now(UTC)))

    def outcomes(self, count: int, *, timeout: float = 10) -> list:
        return [self.results.get(timeout=timeout) for _ in range(count)]

    def watch_in_flight(self) -> threading.Thread:
        def watch():
            while not self._watching.is_set():
                self.peak_in_flight = max(self.peak_in_flight, self.executor.in_flight)
                time.sleep(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        return watcher

    def wait_for_in_flight(self, count: int, timeout: float = 5) -> None:
        wait_until(lambda: self.executor.in_flight >= count, timeout=timeout)

    def close(self) -> None:
        self._watching.set()
        self.executor.stop(timeout=10)
