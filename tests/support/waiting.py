from __future__ import annotations

import time
from collections.abc import Callable

# How long a test waits for something that must happen before it calls it
# a hang. Only a failing test ever waits this long, so the bound is wide:
# a process start on a machine running four test workers on two cores
# took over 10 s. A test whose point is a time bound passes its own.
HANG_SECONDS = 60


def wait_until(
    condition: Callable[[], object], *, timeout: float = HANG_SECONDS
) -> None:
    """Poll `condition` until it holds; fail the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        time.sleep(0.02)
