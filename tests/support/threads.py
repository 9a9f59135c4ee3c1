"""Threads a test started: tests in one process (an xdist worker runs
many) may leave idle executor workers retiring for a while, so a test
counts only the threads that were not alive when it began."""

from __future__ import annotations

import threading


def poller_threads(before: set[threading.Thread]) -> list[str]:
    """The poller threads started since `before` that are still alive."""
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("poller-") and t not in before
    ]
