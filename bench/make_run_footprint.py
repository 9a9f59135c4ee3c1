"""Benchmark: what `make run` costs on disk and in memory, idle.

Starts the Procfile.dev stack as `make run` does (monitor/run_procfile.py:
web, worker, tasks) from a given virtualenv, on a fresh SQLite database in a temporary
folder, on free loopback ports, with PROJECTS projects polling a local
target every minute. It reports the seconds from the runner's start to the
first page, then, after IDLE seconds, the PSS of every process of the
stack from /proc/<pid>/smaps_rollup (shared pages divided among the
processes sharing them, as smem counts), by role; and the virtualenv's
size on disk.

    .venv/bin/python bench/make_run_footprint.py                  # 60 s idle
    .venv/bin/python bench/make_run_footprint.py --idle 20 --venv /tmp/venv-run
    Q_WORKERS=2 WEB_WORKERS=2 .venv/bin/python bench/make_run_footprint.py
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness import ROOT, free_port, machine, markdown_table, process_tree

# A process's role: the first of these words in its command line.
ROLES = {
    "gunicorn": "web (gunicorn)",
    "runpoller": "worker (runpoller, writer)",
    "writer_process": "worker (runpoller, writer)",
    "qcluster": "tasks (qcluster)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=60, help="seconds idle")
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument(
        "--processes", action="store_true", help="also list each process's PSS"
    )
    args = parser.parse_args()

    target = start_target()
    folder = Path(tempfile.mkdtemp(prefix="make-run-footprint-"))
    web, control = free_port(), free_port()
    env = {
        **os.environ,
        "ENV_FILE": str(folder / "none.env"),
        "SECRET_KEY": "bench-" + "x" * 50,
        "HTTPS": "false",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "POLLER_CONTROL_BIND": f"127.0.0.1:{control}",
        "POLLER_CONTROL_URL": f"http://127.0.0.1:{control}",
        "PATH": f"{args.venv / 'bin'}:{os.environ['PATH']}",
    }
    python = str(args.venv / "bin" / "python")
    manage = [python, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, check=True)
    # As make run does: the pages need the collected files' manifest.
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], env=env, check=True)
    subprocess.run(
        [*manage, "shell", "-c", seed(args.projects, target)], env=env, check=True
    )
    procfile = folder / "Procfile"
    text = (ROOT / "Procfile.dev").read_text()
    procfile.write_text(text.replace("127.0.0.1:8000", f"127.0.0.1:{web}"))

    log = folder / "stack.log"  # the stack's output, kept for a look afterwards
    started = time.monotonic()
    stack = subprocess.Popen(
        [python, "-m", "monitor.run_procfile", str(procfile)],
        env=env,
        cwd=ROOT,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        first_page = wait_for_page(
            f"http://127.0.0.1:{web}/accounts/login/", stack, log
        )
        first_page -= started
        time.sleep(args.idle)
        rows = memory_by_role(stack.pid)
        each = memory_by_process(stack.pid) if args.processes else []
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone already
            os.killpg(stack.pid, signal.SIGINT)
        stack.wait(timeout=60)
    print(machine())
    print(f"venv {args.venv}: {venv_megabytes(args.venv)} MB on disk")
    print(f"first page {first_page:.1f} s after the runner started; its log: {log}")
    workers = os.environ.get("Q_WORKERS", "default")
    print(f"Q_WORKERS={workers}, idle {args.idle:.0f} s, {args.projects} projects")
    print(markdown_table(rows))
    if each:
        print(markdown_table(each))


def seed(count: int, target: str) -> str:
    return (
        "from projects.models import Project\n"
        f"for n in range({count}):\n"
        f"    Project.objects.create(name=f'p{{n}}', url='{target}',\n"
        "        interval=60, interval_unit='seconds')\n"
    )


def start_target() -> str:
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/"


def wait_for_page(
    url: str, stack: subprocess.Popen, log: Path, timeout: float = 300
) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stack.poll() is not None:
            raise SystemExit(
                f"the stack stopped before its first page:\n{log.read_text()}"
            )
        try:
            with urllib.request.urlopen(url, timeout=5):
                return time.monotonic()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise SystemExit(f"no answer from {url} within {timeout} s")


def memory_by_role(root: int) -> list[dict]:
    totals: dict[str, list[int]] = {}
    for pid in process_tree(root):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        role = next(
            (role for word, role in ROLES.items() if word.encode() in command),
            "runner (run_procfile)",
        )
        pss = smaps_rollup(pid).get("Pss", 0)
        count, total = totals.get(role, [0, 0])
        totals[role] = [count + 1, total + pss]
    rows = [
        {"role": role, "processes": count, "PSS MiB": f"{kb / 1024:.1f}"}
        for role, (count, kb) in totals.items()
    ]
    processes = sum(count for count, _ in totals.values())
    pss = sum(kb for _, kb in totals.values())
    rows.append(
        {"role": "total", "processes": processes, "PSS MiB": f"{pss / 1024:.1f}"}
    )
    return rows


def memory_by_process(root: int) -> list[dict]:
    """One row a process: its PSS and the start of its command line."""
    rows = []
    for pid in process_tree(root):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        pss = smaps_rollup(pid).get("Pss", 0)
        words = command.decode(errors="replace").split()
        shown = " ".join([Path(words[0]).name, *words[1:4]])[:70] if words else "?"
        rows.append({"pid": pid, "PSS MiB": f"{pss / 1024:.1f}", "command": shown})
    return rows


def smaps_rollup(pid: int) -> dict[str, int]:
    """kB by field name; empty for a process that has exited."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines()[1:]:
        name, _, value = line.partition(":")
        if re.fullmatch(r"\w+", name):
            fields[name] = int(value.split()[0])
    return fields


def venv_megabytes(venv: Path) -> int:
    size = subprocess.run(["du", "-sb", str(venv)], capture_output=True, text=True)
    return round(int(size.stdout.split()[0]) / 1_000_000)


if __name__ == "__main__":
    main()
