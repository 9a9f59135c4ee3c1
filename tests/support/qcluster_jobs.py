"""Jobs for the qcluster tests: importable by a real qcluster process."""

from __future__ import annotations

import time
from pathlib import Path


def answer() -> int:
    return 42


def slow_note(path: str, seconds: float) -> str:
    """Note "started" in the file at `path`, wait, then note "done"."""
    with Path(path).open("a") as file:
        file.write("started\n")
    time.sleep(seconds)
    with Path(path).open("a") as file:
        file.write("done\n")
    return "done"
