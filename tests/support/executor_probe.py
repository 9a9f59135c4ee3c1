"""One poll at a time through a real Executor, on its CurlMulti: the probe
tests run each case both ways a poll can be run (probe() on a thread, and
the executor's many-at-once loop)."""

from __future__ import annotations

import queue

from polling.engine.executor import Executor
from polling.engine.handoff import TaskQueue
from polling.engine.probe import make_handle, make_transfers, poll_steps, probe
from polling.engine.stats import PollStats
from polling.engine.types import Outcome, Task


class ExecutorProbe:
    def __init__(self, **transfer_options) -> None:
        self._tasks = TaskQueue(100)
        self._results: queue.Queue = queue.Queue()
        self._executor = Executor(
            self._tasks,
            self._results,
            limit=1,
            poll=poll_steps,
            make_transfers=lambda: make_transfers(**transfer_options),
            on_finished=lambda project_id, outcome: None,
            stats=PollStats(),
        )
        self._executor.start()

    def probe(self, task: Task) -> Outcome:
        self._tasks.put(task)
        return self._results.get(timeout=60)

    def close(self) -> None:
        self._executor.stop(timeout=10)


def open_handle(mode: str, **options):
    """A handle for run_poll(): a Transport ("alone") or an ExecutorProbe
    ("on-executor"), with make_handle()'s options."""
    return make_handle(**options) if mode == "alone" else ExecutorProbe(**options)


def run_poll(handle, task: Task) -> Outcome:
    if isinstance(handle, ExecutorProbe):
        return handle.probe(task)
    return probe(handle, task)
