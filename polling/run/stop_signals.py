from __future__ import annotations

import os
import signal
import threading

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    """While entered, SIGTERM or SIGINT asks for a graceful stop (sets
    `requested`); a second one exits at once with status 1. On exit, the
    handlers it replaced are back.

    Enter it before anything slow or anything that must be undone (the
    SQLite lock, the writer process, threads): a signal that arrives
    earlier ends the process with Python's default handling."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> threading.Event:
        self._previous = {
            signum: signal.signal(signum, self._on_signal) for signum in STOP_SIGNALS
        }
        return self.requested

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum, frame) -> None:
        # Only a flag: the main thread does the stopping.
        if self.requested.is_set():
            os._exit(1)
        self.requested.set()
