"""What a poll of each socket kind costs: the executor alone, fed at a
fixed rate with ping, DNS, UDP, SSH or HTTP checks of loopback servers,
and the process's CPU per poll (issue #41's target: ICMP and DNS under
50 µs, a ping no dearer than an HTTP poll).

    python bench/netchecks_cost.py --kinds http,icmp,icmp3,dns,udp,ssh \\
        --rate 500 --seconds 5

`icmp` sends one echo a check, `icmp3` three (the default of a project).
`refused` is a ping to 127.0.0.2, a blocked network here: the guard
refuses it before any packet, so it costs what every check costs the
executor without its own work (taking the task, starting the probe, the
outcome, the hand-over to the writer's queue). The DNS server is
Debian's dnsmasq and the HTTP target nginx (their CPU is their own
processes', not counted), the UDP and SSH servers are threads of this
process (their CPU is counted in the process column, not the workers').
Every target is on 127.0.0.1. "workers" is the CPU of the executor's
worker threads alone (read from /proc by the names they give the
system); "process" adds this script's own loop feeding the tasks and
every other thread. Not part of the test suite. A whole runpoller with
these kinds, its own CPU alone, is the capacity benchmark's
(`bench/capacity.py --only kinds,kind`, bench/kinds.py).
"""

from __future__ import annotations

import argparse
import functools
import os
import queue
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import threads_cpu_seconds  # noqa: E402
from nginx import NginxTarget  # noqa: E402

from polling.engine.executor import Executor  # noqa: E402
from polling.engine.handoff import TaskQueue  # noqa: E402
from polling.engine.probe import make_transfers, poll_steps  # noqa: E402
from polling.engine.stats import PollStats  # noqa: E402
from polling.engine.types import Target, Task  # noqa: E402
from tests.support.dns_server import DnsServer  # noqa: E402
from tests.support.socket_servers import BannerServer, UdpServer  # noqa: E402

# A loopback address the executor is told is blocked: its pings are
# refused before a packet is sent (and would stay on loopback if not).
REFUSED_ADDRESS = "127.0.0.2"


def targets_for(kind: str, servers: dict) -> Target:
    if kind == "http":
        return Target(project_id=1, url=servers["http"].url("/ok"))
    if kind == "icmp":
        return Target(project_id=1, url="icmp://127.0.0.1", ping_count=1)
    if kind == "icmp3":
        return Target(project_id=1, url="icmp://127.0.0.1", ping_count=3)
    if kind == "refused":
        return Target(project_id=1, url=f"icmp://{REFUSED_ADDRESS}", ping_count=1)
    if kind == "dns":
        port = servers["dns"].port
        return Target(
            project_id=1,
            url=f"dns://127.0.0.1:{port}/www.test.lan?type=A",
            dns_answers=("192.0.2.10",),
        )
    if kind == "udp":
        return Target(
            project_id=1, url=f"udp://127.0.0.1:{servers['udp'].port}", payload=b"x"
        )
    return Target(project_id=1, url=f"ssh://127.0.0.1:{servers['ssh'].port}")


def measure(target: Target, rate: int, seconds: float, limit: int) -> tuple:
    tasks = TaskQueue(limit * 4)
    results: queue.Queue = queue.Queue()
    executor = Executor(
        tasks,
        results,
        limit=limit,
        poll=poll_steps,
        make_transfers=functools.partial(
            make_transfers, blocked_networks=[f"{REFUSED_ADDRESS}/32"]
        ),
        on_finished=lambda project_id, outcome: None,
        stats=PollStats(),
    )
    executor.start()
    sent = 0
    outcomes = []
    cpu_before = time.process_time()
    workers_before = threads_cpu_seconds(os.getpid(), "worker-")
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * rate)
        while sent < due:
            tasks.put(Task(target, datetime.now(UTC)))
            sent += 1
        while True:
            try:
                outcomes.append(results.get_nowait())
            except queue.Empty:
                break
        time.sleep(0.002)
    while len(outcomes) < sent:
        outcomes.append(results.get(timeout=30))
    cpu = time.process_time() - cpu_before
    workers = threads_cpu_seconds(os.getpid(), "worker-") - workers_before
    executor.stop(timeout=10)
    up = sum(outcome.up for outcome in outcomes)
    reasons = {o.error for o in outcomes if not o.up}
    per_poll = 1e6 / max(sent, 1)
    return sent, up, workers * per_poll, cpu * per_poll, reasons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="icmp,dns,udp,ssh")
    parser.add_argument("--rate", type=int, default=500, help="polls a second")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--limit", type=int, default=200, help="polls at once")
    options = parser.parse_args()
    kinds = options.kinds.split(",")
    with (
        DnsServer() as dns,
        UdpServer() as udp,
        BannerServer() as ssh,
        NginxTarget() as http,
    ):
        servers = {"dns": dns, "udp": udp, "ssh": ssh, "http": http}
        print("| kind | polls | up | CPU per poll: workers / process (µs) |")
        print("| --- | ---: | ---: | ---: |")
        for kind in kinds:
            sent, up, workers, process, reasons = measure(
                targets_for(kind, servers), options.rate, options.seconds, options.limit
            )
            print(f"| {kind} | {sent:,} | {up:,} | {workers:,.0f} / {process:,.0f} |")
            for reason in sorted(reasons)[:3]:
                print(f"|  | down: {reason} | | |")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
