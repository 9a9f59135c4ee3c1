"""What idle slots cost: the executor alone, fed at a fixed rate, at
several concurrency limits, counting its worker threads' turns.

    python bench/slot_cost.py --rate 1000 --seconds 8 --limits 100,400,2000

The target (bench/targets.py) runs as its own process; the feeder puts
tasks on the executor's queue at `--rate` a second, like the scheduler.
For each limit it prints the polls made, the process's CPU per poll, the
worker threads running, their turns (one wait on the sockets each) per
poll, and the voluntary context switches per poll: the costs that grow
with slots that are not in use. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import queue
import resource
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import free_port  # noqa: E402

from polling.engine import executor as executing  # noqa: E402
from polling.engine.executor import Executor  # noqa: E402
from polling.engine.handoff import TaskQueue  # noqa: E402
from polling.engine.probe import make_transfers, poll_steps  # noqa: E402
from polling.engine.stats import PollStats  # noqa: E402
from polling.engine.types import Target, Task  # noqa: E402


def turns_counter() -> list[int]:
    """Count the workers' turns: the executor's own counter when it has
    one, else by wrapping the turn of the older executor."""
    counted = [0]
    worker = getattr(executing, "_Worker", None)
    keep_busy = getattr(worker, "_keep_busy", None)
    if keep_busy is not None:

        def counting(self):
            counted[0] += 1
            return keep_busy(self)

        worker._keep_busy = counting
    return counted


def run(limit: int, rate: int, seconds: float, url: str) -> dict:
    tasks = TaskQueue(max(limit * 2, 1000))
    results: queue.Queue = queue.Queue()
    executor = Executor(
        tasks,
        results,
        limit=limit,
        poll=poll_steps,
        make_transfers=make_transfers,
        on_finished=lambda project_id, outcome: None,
        stats=PollStats(),
    )
    counted = turns_counter()
    executor.start()
    drained = threading.Event()

    def drain():
        while not drained.is_set():
            try:
                results.get(timeout=0.2)
            except queue.Empty:
                continue

    threading.Thread(target=drain, daemon=True).start()
    target = Target(project_id=1, url=url, timeout_seconds=5)
    cpu, usage = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
    turns_before = getattr(executor, "turns", counted[0])
    started = time.monotonic()
    sent = 0
    peak_threads = 0
    while (now := time.monotonic()) < started + seconds:
        due = int((now - started) * rate)
        while sent < due:
            tasks.put(Task(target=target, due_at=datetime.now(UTC)))
            sent += 1
        peak_threads = max(peak_threads, executor.threads)
        time.sleep(0.002)
    while executor.results_queued < sent and time.monotonic() < started + seconds + 10:
        time.sleep(0.01)
    polls = executor.results_queued
    turns = getattr(executor, "turns", counted[0]) - turns_before
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    switches = after.ru_nvcsw - usage.ru_nvcsw
    executor.stop(timeout=5)
    drained.set()
    return {
        "limit": limit,
        "polls": polls,
        "cpu_us_per_poll": round(cpu / max(polls, 1) * 1e6),
        "threads": peak_threads,
        "turns_per_poll": round(turns / max(polls, 1), 2),
        "switches_per_poll": round(switches / max(polls, 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--limits", default="100,400,2000")
    parser.add_argument("--path", default="/ok")
    options = parser.parse_args()
    port = free_port()
    target = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "targets.py"), "--port", str(port)]
    )
    try:
        time.sleep(1)
        for limit in (int(each) for each in options.limits.split(",")):
            url = f"http://127.0.0.1:{port}{options.path}"
            print(run(limit, options.rate, options.seconds, url), flush=True)
    finally:
        target.terminate()
        target.wait()


if __name__ == "__main__":
    main()
