"""Keeping the garbage collector's full passes short.

A poller keeps hundreds of thousands of objects for its whole life (a
target per project, the scheduler's entries). CPython's full collection
walks every one of them with the interpreter lock held: at 300,000
projects a pass took 280-500 ms, every few minutes and at each reload,
and every poll due meanwhile waited (docs/BENCHMARKS.md). Objects that
outlive a load of the projects are the poller's working set, not garbage,
so after each load they move to the collector's permanent generation
(gc.freeze) and later passes walk only what came after. They are still
freed as usual when nothing refers to them any more; only a reference
cycle among them would be kept, and the poller makes none worth the walk.
"""

from __future__ import annotations

import gc


def freeze_survivors() -> None:
    """Leave every object alive now out of future collections."""
    gc.freeze()
