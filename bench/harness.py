"""Shared plumbing for the poller benchmarks: a fresh database, the target
process, and a runpoller process measured from the outside."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_database_url(name: str) -> str:
    """A new, empty database of the kind DATABASE_URL names (SQLite when
    unset), dropped first if it exists."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        path = Path(tempfile.mkdtemp(prefix="bench-")) / f"{name}.sqlite3"
        return f"sqlite:///{path}"
    import psycopg

    server, _, _ = base.rpartition("/")
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    return f"{server}/{name}"


def django_env(database_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "ENV_FILE": "/nonexistent",
        "SECRET_KEY": "benchmark-only-secret-key",
        "DATABASE_URL": database_url,
        **extra,
    }


def manage(database_url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=django_env(database_url),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def setup_django(database_url: str) -> None:
    os.environ.update(django_env(database_url))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


class TargetProcess:
    """bench/targets.py in its own process."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> TargetProcess:
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "targets.py"),
                "--port",
                str(self.port),
            ]
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                self.requests()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the target did not start")

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(5)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def requests(self) -> int:
        with urllib.request.urlopen(self.url("/__stats"), timeout=2) as response:
            return json.load(response)["requests"]


@dataclass
class ProcessSample:
    """CPU and memory of a process, read from /proc."""

    pid: int
    cpu_seconds: float = 0.0
    peak_rss_mb: float = 0.0
    samples: list[float] = field(default_factory=list)

    def read(self) -> None:
        stat = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        self.cpu_seconds = (int(stat[11]) + int(stat[12])) / CLOCK_TICKS
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                self.peak_rss_mb = int(line.split()[1]) / 1024


def machine() -> str:
    memory_kb = int(
        next(
            line.split()[1]
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal:")
        )
    )
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{memory_kb / 1024 / 1024:.0f} GiB RAM, Python {platform.python_version()}"
    )


def markdown_table(rows: list[dict]) -> str:
    headers = list(rows[0])
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines += ["| " + " | ".join(str(row[h]) for h in headers) + " |" for row in rows]
    return "\n".join(lines)
