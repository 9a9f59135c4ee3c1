"""Threads whose names the operating system sees too.

Python names a thread for itself only: `top -H`, `ps -L` and
/proc/<pid>/task/<tid>/comm show every thread of a poller as "python".
A thread started here writes its name into its comm first, so an
operator (and the benchmarks, which read each thread's CPU from outside:
bench/harness.py threads_cpu_seconds) sees which of a poller's threads
spends the CPU: the workers, the writer, the scheduler.

The kernel keeps 15 bytes of a comm. The "poller-" every poller thread's
name begins with is dropped there (the process already says it is a
poller): "poller-worker-2" is "worker-2", "poller-scheduler" "scheduler".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

COMM_BYTES = 15
PROCESS_PREFIX = "poller-"


def named_thread(
    target: Callable[..., Any],
    name: str,
    *,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    daemon: bool | None = None,
) -> threading.Thread:
    """A threading.Thread (not started) that names itself to the system
    when it starts, then runs `target`."""

    def run(*args: Any, **kwargs: Any) -> None:
        name_this_thread(name)
        target(*args, **kwargs)

    return threading.Thread(
        target=run, name=name, args=args, kwargs=kwargs, daemon=daemon
    )


def os_name(name: str) -> str:
    """What the system shows of a thread named `name`."""
    short = name.removeprefix(PROCESS_PREFIX) or name
    return short.encode()[:COMM_BYTES].decode(errors="ignore")


def name_this_thread(name: str) -> None:
    """Best effort: where /proc is missing (not Linux) nothing changes."""
    path = f"/proc/self/task/{threading.get_native_id()}/comm"
    try:
        with open(path, "w", encoding="utf-8") as comm:
            comm.write(os_name(name))
    except OSError:
        pass
