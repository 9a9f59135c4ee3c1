"""The poller's part of bench/tls_reuse.py --hosts: run in a process of
its own with the engine of a given checkout, so that the code before and
after a change can be compared in one run, and its CPU alone measured.

    python bench/tls_hosts_client.py CHECKOUT CA_BUNDLE ROUNDS PORT,PORT,...

Prints one JSON line. Imports nothing of this checkout before CHECKOUT's
`polling` (bench/harness.py would)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def poll_hosts(code: str, ca_bundle: str, ports: list[int], rounds: int) -> dict:
    """In this process, with the engine of checkout `code`: poll every
    port's origin 2 + `rounds` times through an Executor, as runpoller
    does; CPU, wall time and RSS of the measured rounds."""
    sys.path.insert(0, code)
    import inspect
    import queue
    import resource
    from datetime import UTC, datetime

    import certifi

    from polling.engine.executor import Executor
    from polling.engine.handoff import TaskQueue
    from polling.engine.probe import make_transfers, poll_steps
    from polling.engine.stats import PollStats
    from polling.engine.types import Target, Task

    os.environ["SSL_CERT_FILE"] = ca_bundle
    certifi.where = lambda: ca_bundle  # make_transfers() asks it at run time
    options = {}
    if "sessions" in inspect.signature(make_transfers).parameters:
        # As the coordinator builds it: one store for all workers.
        from polling.engine.tls_sessions import SessionShares

        options = {"sessions": SessionShares(), "certificates": {}}
    results: queue.Queue = queue.Queue()
    tasks = TaskQueue(1000)
    executor = Executor(
        tasks,
        results,
        limit=100,
        poll=poll_steps,
        make_transfers=lambda: make_transfers(**options),
        on_finished=lambda project_id, outcome: None,
        stats=PollStats(),
    )
    executor.start()
    targets = [
        Target(project_id=n, url=f"https://127.0.0.1:{port}/", timeout_seconds=10)
        for n, port in enumerate(ports)
    ]

    def go_round() -> int:
        down = received = 0
        for target in targets:
            tasks.put(Task(target=target, due_at=datetime.now(UTC)))
            while not results.empty():
                down += not results.get().up
                received += 1
        while received < len(targets):
            down += not results.get(timeout=30).up
            received += 1
        return down

    go_round()
    go_round()
    perf_control("enable")
    cpu, wall = time.process_time(), time.monotonic()
    down = sum(go_round() for _ in range(rounds))
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    perf_control("disable")
    polls = rounds * len(targets)
    executor.stop(timeout=10)
    import polling

    return {
        "code": str(Path(polling.__file__).parent.parent),
        "polls": polls,
        "down": down,
        "cpu_us_per_poll": round(cpu / polls * 1e6),
        "https_polls_per_cpu_second": round(polls / cpu),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def perf_control(command: str) -> None:
    """Tell `perf record -D -1 --control fifo:CTL,ACK` to record, or to
    stop, when PERF_CTL and PERF_ACK name those fifos: the measured rounds
    alone are profiled."""
    control, ack = os.environ.get("PERF_CTL"), os.environ.get("PERF_ACK")
    if not (control and ack):
        return
    with open(control, "w") as fifo:
        fifo.write(f"{command}\n")
    with open(ack) as fifo:
        fifo.readline()


if __name__ == "__main__":
    code, ca_bundle, rounds, ports = sys.argv[1:5]
    ports = [int(each) for each in ports.split(",")]
    print(json.dumps(poll_hosts(code, ca_bundle, ports, int(rounds))))
