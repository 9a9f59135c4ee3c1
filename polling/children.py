"""runpoller --processes N: N pollers on one machine under one parent.

The parent only starts the children (`runpoller` again, each with its own
control port), forwards SIGTERM and SIGINT to them, and returns once every
one has exited. The children share the projects through shard leases, so
this needs PostgreSQL.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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

    def wait(self) -> int:
        """Wait for every child; the worst exit status."""
        return max((child.wait() for child in self._children), default=0)


def run_children(children: ChildPollers, bind: str) -> int:
    """Start the children, forward signals until they have all exited."""
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
        children.forward(signum)

    previous = {
        signum: signal.signal(signum, on_signal)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        children.start(bind)
        return children.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
