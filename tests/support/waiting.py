from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], *, timeout: float = 10) -> None:
    """Poll `condition` until it holds; fail the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        time.sleep(0.02)
