"""Benchmark: a fleet through a kill and a pause (issue #39, item 10).

    BENCH_DB_SUFFIX=pause .venv/bin/python bench/bench_pause.py --runs 3

Three runpoller processes on PostgreSQL share --projects projects polled
every --interval seconds (default 600 at 20 s) from a loopback target
served here. Counted from the moment all three have started (each
holds shards: on a loaded machine that came up to 10 s after its engine
had started, and a kill at 30 s of that clock took projects whose first
poll was not saved yet, with no window to go on from): one is killed with
SIGKILL at --kill-at (30 s), another is stopped with SIGSTOP at
--pause-at (60 s) for --pause-for (45 s) and continued with SIGCONT, and
every poller left is stopped with SIGTERM at --stop-at (150 s). The
leases keep the settings' defaults (POLLER_SHARDS 256, TTL 15 s, tick
5 s) unless --shards, --ttl or --tick say otherwise.

Then, from the stored polls: of the windows due from two intervals after
the start (the first polls are spread over one) until an interval before
the SIGTERM, how many are stored, and each one missing between two
stored windows of its project, with its shard and where it lies on the
run's clock. The pollers' shard moves (Took, Lost, Handed over) are
printed with their times. A run passes when no window is missing and
none is stored twice.

    --quick      a short smoke run: 120 projects at 6 s, TTL 3 s, tick
                 1 s, 16 shards, kill at 10 s, pause at 16 s for 10 s,
                 stop at 40 s
    --runs N     the scenario N times, each on a fresh database
    --port P     the target's port (default: any free one)
    --keep-logs  keep the pollers' logs (their folder is printed)

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server,
BENCH_DB_SUFFIX names the database (monitor_bench_pause_<suffix>). Prints
each run and publishes them as docs/benchmarks/<date>-pause-<HHMM>.md
(not with --quick); exits with status 1 when a run missed or doubled a
window.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness import (
    ROOT,
    django_env,
    drop_database,
    fresh_database_url,
    git_head,
    machine,
    manage,
    relative_command,
)
from run_logs import publish_run

SUFFIX = os.environ.get("BENCH_DB_SUFFIX", "pause")
PG_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432") + "/postgres"
STARTED = "Poller started with"
TOOK = "INFO polling.engine.coordinator: Took "
NAMES = ("killed", "paused", "steady")
# Log lines that tell how the shards moved, shown with their times.
MOVES = re.compile(r"Took \d+ shards|Lost \d+ shards|Handed over \d+ shards")
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})")
# How long a poller may take to set Django up in it and its writer's child
# on a loaded machine.
STARTUP_SECONDS = 180


@dataclass(frozen=True)
class Timeline:
    """Seconds after all pollers have started."""

    kill_at: float
    pause_at: float
    pause_for: float
    stop_at: float


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format, *args) -> None:
        pass  # thousands of requests: not worth a line each


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A poller taking shards over polls hundreds of projects at once: with
    # socketserver's backlog of 5 their connections waited for SYN
    # retries, timed out, and the polls failing held the next windows.
    request_queue_size = 4096

    def handle_error(self, request, client_address) -> None:
        pass  # a poller killed or paused mid-request: nothing to report


class Target:
    """A loopback HTTP server answering 200 "ok" to every GET."""

    def __init__(self, port: int) -> None:
        self.server = _Server(("127.0.0.1", port), _Ok)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Target:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"


class Poller:
    """One runpoller process, its output in a file."""

    def __init__(self, url: str, log: Path, env: dict[str, str]) -> None:
        self.log = log
        with log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runpoller", "--no-control"],
                cwd=ROOT,
                env=django_env(url, LOG_LEVEL="INFO", **env),
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def started(self) -> bool:
        """Whether it polls: its engine started and it holds shards."""
        output = self.output()
        return STARTED in output and TOOK in output

    def signal(self, signum: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signum)

    def wait(self) -> int:
        try:
            return self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def main() -> None:
    args = parse_args()
    started = datetime.now(UTC)
    sections, failed, url = [], 0, ""
    try:
        for number in range(1, args.runs + 1):
            print(f"== run {number} of {args.runs}", flush=True)
            url = fresh_database_url(f"monitor_bench_pause_{SUFFIX}", base=PG_URL)
            passed, lines = run_once(args, url)
            failed += not passed
            sections += [f"Run {number} of {args.runs}:", "", *lines, ""]
    finally:
        if url:
            drop_database(url)
    verdict = f"{args.runs - failed} of {args.runs} runs missed no window"
    print(f"\n{verdict}")
    text = "\n".join([*header(args, started), *sections, f"**{verdict}.**", ""])
    if not args.quick:
        print(f"Published: {publish_run('pause', text, when=started)}")
    sys.exit(1 if failed else 0)


def header(args, started: datetime) -> list[str]:
    leases = poller_env(args) or {"leases": "the settings' defaults"}
    timeline = args.timeline
    return [
        f"#### Pause run {started:%Y-%m-%d %H:%M} UTC",
        "",
        f"- machine: {machine()}; git {git_head()}",
        f"- command: `{relative_command(sys.argv)}`",
        f"- {args.projects} projects every {args.interval} s, 3 pollers; "
        f"{', '.join(f'{k} {v}' for k, v in leases.items())}",
        f"- SIGKILL one at {timeline.kill_at:g} s, SIGSTOP another at "
        f"{timeline.pause_at:g} s for {timeline.pause_for:g} s, SIGTERM all at "
        f"{timeline.stop_at:g} s (from the moment all three have started)",
        "",
    ]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--projects", type=int, default=600)
    parser.add_argument("--interval", type=int, default=20, help="seconds")
    parser.add_argument("--kill-at", type=float, default=30)
    parser.add_argument("--pause-at", type=float, default=60)
    parser.add_argument("--pause-for", type=float, default=45)
    parser.add_argument("--stop-at", type=float, default=150)
    parser.add_argument("--shards", type=int, help="POLLER_SHARDS")
    parser.add_argument("--ttl", type=float, help="POLLER_LEASE_TTL")
    parser.add_argument("--tick", type=float, help="POLLER_LEASE_TICK")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--keep-logs", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.projects, args.interval, args.shards = 120, 6, 16
        args.ttl, args.tick = 3.0, 1.0
        args.kill_at, args.pause_at, args.pause_for, args.stop_at = 10, 16, 10, 40
    args.timeline = Timeline(args.kill_at, args.pause_at, args.pause_for, args.stop_at)
    return args


def poller_env(args) -> dict[str, str]:
    given = {
        "POLLER_SHARDS": args.shards,
        "POLLER_LEASE_TTL": args.ttl,
        "POLLER_LEASE_TICK": args.tick,
    }
    return {name: str(value) for name, value in given.items() if value is not None}


def run_once(args, url: str) -> tuple[bool, list[str]]:
    """One run of the scenario on a fresh database: whether it passed, and
    its report."""
    manage(url, "migrate", "--no-input")
    logs = Path(tempfile.mkdtemp(prefix="bench-pause-"))
    with Target(args.port) as target:
        _in_child(url, "make", args.projects, args.interval, target.url("/ok"))
        pollers = [
            Poller(url, logs / f"{name}.log", poller_env(args)) for name in "abc"
        ]
        try:
            t0 = _wait_started(pollers)
            start_wall = time.time()
            play(pollers, args.timeline, t0)
        except BaseException:
            for poller in pollers:
                poller.signal(signal.SIGCONT)
                poller.signal(signal.SIGTERM)
            raise
        finally:
            # One SIGTERM each (play() sent it): a second one makes a
            # poller exit at once, with status 1.
            statuses = [poller.wait() for poller in pollers]
    since = start_wall + 2 * args.interval
    stop_wall = start_wall + args.timeline.stop_at
    windows = int((stop_wall - args.interval - since) // args.interval)
    until = since + windows * args.interval
    shards = args.shards or 256
    counted = _in_child(url, "count", since, until, args.interval, shards)
    lines = report(counted, pollers, start_wall, statuses)
    passed = counted["missed"] == 0 and counted["extra"] == 0
    if args.keep_logs or not passed:
        print(f"logs: {logs}")
    else:
        shutil.rmtree(logs, ignore_errors=True)
    return passed, lines


def _wait_started(pollers: list[Poller]) -> float:
    deadline = time.monotonic() + STARTUP_SECONDS
    while not all(p.started() for p in pollers):
        if time.monotonic() > deadline or any(p.process.poll() for p in pollers):
            raise RuntimeError("the pollers did not start")
        time.sleep(0.2)
    return time.monotonic()


def play(pollers: list[Poller], timeline: Timeline, t0: float) -> None:
    """Send the signals on the timeline."""
    killed, paused, _ = pollers
    steps = [
        (timeline.kill_at, lambda: killed.signal(signal.SIGKILL)),
        (timeline.pause_at, lambda: paused.signal(signal.SIGSTOP)),
        (timeline.pause_at + timeline.pause_for, lambda: paused.signal(signal.SIGCONT)),
    ]
    for at, step in sorted(steps, key=lambda s: s[0]):
        time.sleep(max(t0 + at - time.monotonic(), 0))
        step()
    time.sleep(max(t0 + timeline.stop_at - time.monotonic(), 0))
    for poller in pollers:
        poller.signal(signal.SIGTERM)


def report(counted: dict, pollers: list[Poller], start: float, statuses) -> list:
    """The run in Markdown lines (printed too): the shard moves each poller
    logged, the windows counted, every project that missed one."""
    lines = ["```"]
    for name, poller, status in zip(NAMES, pollers, statuses, strict=True):
        lines.append(f"{name} poller (exit {status}):")
        lines += [
            f"  {at:7.1f} s  {line}" for at, line in _moves(poller.output(), start)
        ]
    lines += [
        f"windows {counted['stored']} stored of {counted['due']} due; "
        f"{counted['missed']} missed, {counted['extra']} doubled "
        f"(from {counted['since'] - start:.0f} s to {counted['until'] - start:.0f} s)"
    ]
    if counted["failed"]:
        lines.append(
            f"failed polls (the target's, not the fleet's): {counted['failed']}"
        )
    for gap in counted["gaps"][:20]:
        stored = ", ".join(f"{at - start:.1f}" for at in gap["stored"])
        lines.append(
            f"  project {gap['project']} (shard {gap['shard']}): "
            f"{gap['missed']} missed, {gap['doubled']} doubled; stored at {stored} s"
        )
    lines.append("```")
    print("\n".join(lines[1:-1]), flush=True)
    return lines


def _moves(output: str, start: float) -> list[tuple[float, str]]:
    moves = []
    for line in output.splitlines():
        stamp = LOG_TIME.match(line)
        if stamp and MOVES.search(line):
            at = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f")
            seconds = at.timestamp() - start
            moves.append((seconds, line[stamp.end() :].strip()[:100]))
    return moves


# The database steps, each in a child process with Django set up on the
# run's database (bench/bench_pause.py make|count ...).


def _in_child(url: str, step: str, *values) -> dict:
    import json

    done = subprocess.run(
        [sys.executable, __file__, "--step", step, *map(str, values)],
        env=django_env(url),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{step} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def make_projects(count: int, interval: int, url: str) -> dict:
    from projects.models import Project

    Project.objects.bulk_create(
        Project(
            name=f"bench {i}",
            url=f"{url}?p={i}",
            interval=interval,
            interval_unit="seconds",
            timeout_seconds=5,
        )
        for i in range(count)
    )
    return {"projects": Project.objects.count()}


def count_windows(since: float, until: float, interval: int, shards: int) -> dict:
    """Of the windows due in [since, until): how many are stored, how many
    are missing (each gap between two stored ones listed), how many are
    stored closer than an interval to the one before (doubled).

    A project's windows are a grid of its own, one in every interval: from
    an interval before `since` (the window that was running then), each
    project has exactly one more than the intervals counted."""
    from django.db import connection

    from projects.models import PollResult, Project

    begin, end = (datetime.fromtimestamp(t, UTC) for t in (since, until))
    step = timedelta(seconds=interval)
    due_each = round((until - since) / interval) + 1
    by_project: dict[int, list[datetime]] = {
        pk: [] for pk in Project.objects.values_list("pk", flat=True)
    }
    rows = PollResult.objects.filter(polled_at__gte=begin - step, polled_at__lt=end)
    for project_id, at in rows.values_list("project_id", "polled_at"):
        by_project[project_id].append(at)
    stored = missed = extra = 0
    gaps = []
    for project_id, times in sorted(by_project.items()):
        times.sort()
        doubled = sum(b - a < step * 0.99 for a, b in itertools.pairwise(times))
        lost = max(due_each - (len(times) - doubled), 0)
        stored += len(times) - doubled
        extra += doubled
        missed += lost
        if lost or doubled:
            gaps.append(
                {
                    "project": project_id,
                    "shard": project_id % shards,
                    "missed": lost,
                    "doubled": doubled,
                    "stored": [at.timestamp() for at in times],
                }
            )
    failed = Counter(
        rows.exclude(error_message="").values_list("error_message", flat=True)
    )
    connection.close()
    return {
        "failed": dict(failed.most_common(5)),
        "since": since - interval,
        "until": until,
        "due": len(by_project) * due_each,
        "stored": stored,
        "missed": missed,
        "extra": extra,
        "gaps": gaps,
    }


def _step(argv: list[str]) -> None:
    import json

    import django

    django.setup()
    step, values = argv[0], argv[1:]
    if step == "make":
        out = make_projects(int(values[0]), int(values[1]), values[2])
    else:
        since, until, interval, shards = values
        out = count_windows(float(since), float(until), int(interval), int(shards))
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--step"]:
        _step(sys.argv[2:])
    else:
        main()
