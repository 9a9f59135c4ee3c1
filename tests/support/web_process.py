"""The Procfile's web line, for tests that start the web process as it
is deployed."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.processes import ROOT


def procfile_web_command(procfile: Path = ROOT / "Procfile") -> str:
    (line,) = [
        line for line in procfile.read_text().splitlines() if line.startswith("web:")
    ]
    return line.removeprefix("web:").strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
