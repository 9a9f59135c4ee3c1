"""runpoller --processes N: N pollers on one machine under one parent.

The parent only starts the children (`runpoller` again, each with its own
control port), forwards SIGTERM and SIGINT to them (each one it gets, from
the first moment of its start-up, goes to every child once, even to one
started after it), and returns once every one has exited. The children
share the projects through shard leases, so this needs PostgreSQL.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parent.parent
# How often the parent looks for children that ended (a signal wakes it
# at once).
FORWARD_CHECK_SECONDS = 0.2


def child_bind(bind: str, index: int) -> str:
    """Child `index`'s control address: the next ports after the parent's
    (port 0 stays 0: each picks a free one)."""
    host, _, port = bind.rpartition(":")
    return bind if int(port) == 0 else f"{host}:{int(port) + index}"


class ChildPollers:
    def __init__(self, count: int, args: list[str], *, env: dict[str, str]) -> None:
        self._count = count
        self._args = args
        self._env = env
        self._children: list[subprocess.Popen] = []

    def start(self, bind: str) -> None:
        for index in range(self._count):
            env = {**self._env, "POLLER_CONTROL_BIND": child_bind(bind, index)}
            self._children.append(
                subprocess.Popen(
                    [sys.executable, "manage.py", "runpoller", *self._args],
                    cwd=ROOT,
                    env=env,
                )
            )

    @property
    def pids(self) -> list[int]:
        return [child.pid for child in self._children]

    def forward(self, signum: int) -> None:
        for child in self._children:
            if child.poll() is None:
                child.send_signal(signum)

    def exit_status(self, forwarded: set[int]) -> int | None:
        """None while a child runs; then the first status that is not 0 nor
        the end by a signal forwarded to it (a child still in the first
        milliseconds of its start-up, before it catches signals), else 0."""
        statuses = [child.poll() for child in self._children]
        if None in statuses:
            return None
        explained = {0} | {-signum for signum in forwarded}
        return next((s for s in statuses if s not in explained), 0)


class ReceivedSignals(Protocol):
    """The signals this process got, in order, and an event set at each
    (polling/run/stop_signals.py SignalsToForward)."""

    received: list[int]
    arrived: threading.Event


def run_children(children: ChildPollers, bind: str, signals: ReceivedSignals) -> int:
    """Start the children, then pass every signal this process gets on to
    each child once, whenever it came, until they have all exited; their
    worst exit status."""
    children.start(bind)
    forwarded = 0
    while (status := children.exit_status(set(signals.received))) is None:
        while forwarded < len(signals.received):
            children.forward(signals.received[forwarded])
            forwarded += 1
        signals.arrived.wait(FORWARD_CHECK_SECONDS)
        signals.arrived.clear()
    return status
