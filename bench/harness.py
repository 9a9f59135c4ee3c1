"""Shared plumbing for the poller benchmarks: a fresh database, the target
process, and a runpoller process measured from the outside."""

from __future__ import annotations

import json
import os
import platform
import resource
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polling.engine.stats import percentile  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A free loopback port: the system's choice, or the first free one of
    BENCH_PORTS ("27000-27999") on a machine shared by several runs."""
    first, _, last = os.environ.get("BENCH_PORTS", "").partition("-")
    candidates = range(int(first), int(last) + 1) if last else (0,)
    for port in candidates:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise RuntimeError(f"no free port in BENCH_PORTS {first}-{last}")


def is_postgres(database_url: str) -> bool:
    return database_url.startswith("postgres")


def fresh_database_url(
    name: str, *, base: str | None = None, template: str | None = None
) -> str:
    """A new database of the kind `base` names (default: DATABASE_URL;
    SQLite when unset), dropped first if it exists. Empty, or a copy of the
    database at the URL `template`."""
    base = os.environ.get("DATABASE_URL", "") if base is None else base
    if not is_postgres(base):
        path = Path(tempfile.mkdtemp(prefix="bench-")) / f"{name}.sqlite3"
        if template:
            for suffix in ("", "-wal"):
                source = Path(sqlite_path(template) + suffix)
                if source.exists():
                    shutil.copyfile(source, f"{path}{suffix}")
        return f"sqlite:///{path}"
    server, _, _ = base.rpartition("/")
    copy = f" TEMPLATE {template.rpartition('/')[2]}" if template else ""
    with _postgres_admin(server) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}{copy}")
    return f"{server}/{name}"


def drop_database(database_url: str) -> None:
    """Drop a database fresh_database_url() made (a SQLite file's folder)."""
    if not is_postgres(database_url):
        shutil.rmtree(Path(sqlite_path(database_url)).parent, ignore_errors=True)
        return
    server, _, name = database_url.rpartition("/")
    with _postgres_admin(server) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def sqlite_path(database_url: str) -> str:
    return database_url.removeprefix("sqlite:///")


def _postgres_admin(server: str):
    import psycopg

    return psycopg.connect(f"{server}/postgres", autocommit=True)


def django_env(database_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "ENV_FILE": "/nonexistent",
        "SECRET_KEY": "benchmark-only-secret-key",
        "DATABASE_URL": database_url,
        **extra,
    }


def raise_open_files_limit() -> None:
    """Let this process and its children open as many sockets as allowed:
    thousands of connections are the point of the benchmarks."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def manage(database_url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=django_env(database_url),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def percentile_ms(ordered: list[float], share: float) -> float | None:
    """The engine's percentile of sorted seconds, in ms to a tenth; None
    when there is nothing to rank."""
    if not ordered:
        return None
    return round(percentile(ordered, share * 100) * 1000, 1)


def setup_django(database_url: str) -> None:
    os.environ.update(django_env(database_url))
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
    """CPU and memory of a process, read from /proc. With `descendants`,
    of the process and every process under it (runpoller --processes N,
    nginx's workers), added up."""

    pid: int
    cpu_seconds: float = 0.0
    peak_rss_mb: float = 0.0
    peak_threads: int = 0
    samples: list[float] = field(default_factory=list)
    descendants: bool = False

    def read(self) -> None:
        pids = process_tree(self.pid) if self.descendants else [self.pid]
        cpu, rss, threads = 0.0, 0.0, 0
        for pid in pids:
            try:
                cpu += process_cpu_seconds(pid)
                status = Path(f"/proc/{pid}/status").read_text().splitlines()
            except FileNotFoundError:
                if pid == self.pid:
                    raise
                continue  # a descendant that has just exited
            for line in status:
                if line.startswith("VmHWM:"):
                    rss += int(line.split()[1]) / 1024
                elif line.startswith("Threads:"):
                    threads += int(line.split()[1])
        self.cpu_seconds = cpu
        self.peak_rss_mb = max(self.peak_rss_mb, rss)
        self.peak_threads = max(self.peak_threads, threads)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of one process so far (its exited children not
    included)."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / CLOCK_TICKS


def threads_cpu_seconds(pid: int, name_prefix: str) -> float:
    """User + system CPU so far of the live threads of one process whose
    system name (comm: polling/engine/threads.py names a poller's threads
    so) begins with `name_prefix`. A thread that has ended takes its CPU
    with it: compare two readings only while the threads live."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if not (task / "comm").read_text().startswith(name_prefix):
                continue
            stat = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue  # a thread that has just ended
        total += int(stat[11]) + int(stat[12])
    return total / CLOCK_TICKS


def process_tree(pid: int) -> list[int]:
    """The process and its live descendants."""
    tree, index = [pid], 0
    while index < len(tree):
        for children in Path(f"/proc/{tree[index]}/task").glob("*/children"):
            try:
                tree += [int(child) for child in children.read_text().split()]
            except FileNotFoundError:
                continue
        index += 1
    return tree


class BackendCpu:
    """CPU seconds the PostgreSQL backends serving one database have used
    (from /proc: the server runs on this machine). A backend that has
    exited keeps what it used when last seen."""

    def __init__(self, database_url: str) -> None:
        server, _, self.database = database_url.rpartition("/")
        self.admin_url = f"{server}/postgres"
        self.seen: dict[int, float] = {}

    def __call__(self) -> float:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            rows = connection.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s",
                [self.database],
            ).fetchall()
        for (pid,) in rows:
            try:
                self.seen[pid] = process_cpu_seconds(pid)
            except FileNotFoundError:
                continue
        return sum(self.seen.values())


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, all cores
    added up: two readings give the machine's load in between."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split()[1:9]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields) - idle) / CLOCK_TICKS, sum(fields) / CLOCK_TICKS


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
    """Rows of {column: cell} as a markdown table; the first row names the
    columns, and a row without a column gets an empty cell."""
    headers = list(rows[0])
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines += [
        "| " + " | ".join(str(row.get(h, "")) for h in headers) + " |" for row in rows
    ]
    return "\n".join(lines)


def relative(path: str) -> str:
    try:
        return str(Path(path).relative_to(ROOT))
    except ValueError:
        return path


def relative_command(argv: list[str]) -> str:
    """This process's command line as someone would type it in ROOT."""
    return shlex.join([relative(sys.executable), *argv])


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return "unknown CPU"


def database_versions(databases: list[str]) -> str:
    import sqlite3

    versions = []
    for database in databases:
        if is_postgres(database):
            import psycopg

            with psycopg.connect(database) as connection:
                version = connection.execute("SHOW server_version").fetchone()[0]
            versions.append(f"PostgreSQL {version}")
        else:
            versions.append(f"SQLite {sqlite3.sqlite_version} (WAL)")
    return ", ".join(versions)


def git_head() -> str:
    """The commit measured, and whether the engine differs from it."""
    head = subprocess.run(
        ["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "polling", "projects", "monitor"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"`{head}`" + (" (engine has uncommitted changes)" if dirty else "")
