"""Benchmark: one agent at full pace, sending to the Procfile's web line.

Makes its own database (DATABASE_URL's server, or --db sqlite), migrates
it, adds --projects HTTP projects at --interval seconds polling a local
nginx (/ok), all in one region with one agent, and starts the Procfile's
`web` line (gunicorn, WEB_CONCURRENCY workers) on 127.0.0.1. Then it runs
`manage.py runagent` with no database setting for --duration seconds and
stops it with SIGTERM.

It reports, from outside the processes, over a window of --duration
seconds that starts when the first rows are stored (the first sync hands
the agent every target at once): the agent's polls/s (counted at the
target), the results stored/s, the web process's (gunicorn's master and
workers) and the database backends' CPU per stored result, and the delay
from a poll to its row (p50/p99: a sample of projects' newest rows,
looked at every 0.25 s; the row's `polled_at` window start against the
look that first saw it). Then, once the agent has stopped: every poll
the target answered is a row or left on the agent's disk (0 lost), none
twice. And, measured in this process before the agent starts, what one
of the agent's periodic syncs costs the server (it runs every
AGENT_SYNC_SECONDS, whatever the load; every 30 s it carries every
project's id).

Full size, on a quiet machine (each database in turn):

    .venv/bin/python bench/bench_agent.py --projects 300000 --interval 60 \\
        --duration 180
    .venv/bin/python bench/bench_agent.py --db sqlite --projects 300000 \\
        --interval 60 --duration 180
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench_pings import Web
from harness import (
    ROOT,
    fresh_database_url,
    git_head,
    machine,
    manage,
    markdown_table,
    percentile_ms,
    process_cpu_seconds,
    raise_open_files_limit,
    relative_command,
    setup_django,
)
from nginx import NginxTarget
from run_logs import publish_run

CHUNK = 5000
# The delay from poll to row is read from this many projects' rows (spread
# over all of them), looked at every SAMPLE_SECONDS: a row is stored by the
# look that first sees it, so the delay is late by up to that long. The
# results have no stored-at column, and one for a benchmark would cost
# every install 8 bytes a row.
SAMPLE_PROJECTS = 1000
SAMPLE_SECONDS = 0.25
# The first sync carries every target at once (300,000 in the full run):
# the measured window starts once rows arrive, at most this long after.
FIRST_ROWS_MAX_WAIT = 600


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    database = fresh_database_url(f"bench_agent_{args.suffix}", base=args.db)
    manage(database, "migrate", "--noinput")
    setup_django(database)
    with NginxTarget(workers=1) as target, Web(database, args.workers) as web:
        token, region, ids = add_agent_and_projects(args, target.url("/ok"))
        web.wait_ready()
        row = run(args, web, target, token, region, ids)
    row.update(database="PostgreSQL" if args.db else "SQLite")
    text = "\n".join(
        [
            "# Agent benchmark",
            "",
            f"`{relative_command(sys.argv)}`",
            "",
            f"Machine: {machine()}; commit {git_head()}",
            "",
            markdown_table([row]),
        ]
    )
    print(text)
    print(f"Published: {publish_run('agent', text).relative_to(ROOT)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2))
    )
    parser.add_argument(
        "--db",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"),
        help="a database URL whose server to use, or 'sqlite'",
    )
    parser.add_argument("--suffix", default=os.environ.get("BENCH_DB_SUFFIX", "run"))
    parser.add_argument(
        "--max-concurrent",
        type=int,
        help="the agent's slots (its MAX_CONCURRENT_HTTP, default 1,000); the "
        "capacity benchmark's scale-300k gives runpoller 50",
    )
    args = parser.parse_args()
    args.db = "" if args.db == "sqlite" else args.db
    return args


def add_agent_and_projects(args, url: str) -> tuple[str, object, list[int]]:
    from django.db import connection

    from projects.models import Agent, Project, Region

    region = Region.objects.create(name="bench-agents")
    ids = []
    for first in range(0, args.projects, CHUNK):
        made = Project.objects.bulk_create(
            Project(
                name=f"bench agent {n}",
                url=f"{url}?p={n}",
                interval=args.interval,
                interval_unit=Project.IntervalUnit.SECONDS,
                timeout_seconds=5,
            )
            for n in range(first, min(first + CHUNK, args.projects))
        )
        Project.regions.through.objects.bulk_create(
            Project.regions.through(project_id=p.pk, region_id=region.pk) for p in made
        )
        ids += [p.pk for p in made]
    # As in an install whose projects were not all saved in the last ten
    # minutes: each sync brings the targets of those saved since the
    # agent's last load, less CHANGES_OVERLAP (polling/engine/coordinator.py).
    Project.objects.update(updated_at=datetime.now(UTC) - timedelta(hours=1))
    # Statistics, as autovacuum keeps them in a live install: without them
    # PostgreSQL read the projects saved since the last sync through the
    # team index (every project), not through updated_at's (17 ms against
    # 0.1 at 20,000).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    _, token = Agent.issue("bench", region)
    return token, region, ids


def run(args, web: Web, target, token: str, region, ids: list[int]) -> dict:
    from projects.models import PollResult, Status

    results = PollResult.objects.filter(region=region)
    sync_cpu = {ids: one_sync_cpu(token, ids=ids) for ids in (True, False)}
    agent, log = start_agent(web, token, args.max_concurrent)
    started = time.monotonic()
    while not results.exists():
        if agent.poll() is not None or time.monotonic() - started > FIRST_ROWS_MAX_WAIT:
            raise SystemExit(f"no result stored; the agent said:\n{log.read_text()}")
        time.sleep(0.5)
    first_rows_after = time.monotonic() - started

    sampler = DelaySampler(results, ids[:: max(len(ids) // SAMPLE_PROJECTS, 1)])
    before = Reading.take(web, target, results)
    agent_cpu_before = process_cpu_seconds(agent.pid)
    while time.monotonic() - before.at < args.duration:
        time.sleep(SAMPLE_SECONDS)
        sampler.look()
    after = Reading.take(web, target, results)
    # Over the measured window only: its start-up (loading every target)
    # is not a cost per poll.
    agent_cpu = process_cpu_seconds(agent.pid) - agent_cpu_before

    agent.send_signal(signal.SIGTERM)
    agent.wait(timeout=settings_stop_timeout() + 60)
    said = log.read_text()
    left = re.search(r"Stopped with (\d+) results buffered on disk", said)
    left_on_disk = int(left.group(1)) if left else None
    polls = re.search(r"(\d+) polls \(", said)
    stored = results.count()
    windows = results.values("project_id", "polled_at").distinct().count()
    down = results.exclude(status=Status.UP).count()
    agent_polls = int(polls.group(1)) if polls else None
    answered = target.requests()
    if target.process.poll() is not None:
        # Its polls failed "connection refused" from then on: the counts
        # at the target say nothing. (Seen in smoke runs on a shared
        # machine: not by memory; its log had no error.)
        print(f"The target (nginx) exited during the run: {target.process.returncode}")
    window = after.at - before.at
    rows = after.rows - before.rows
    web_cpu = after.web_cpu - before.web_cpu
    db_cpu = after.db_cpu - before.db_cpu
    delays = sorted(sampler.delays)
    return {
        "projects": args.projects,
        "agent slots": args.max_concurrent or "default (1,000)",
        "interval": f"{args.interval} s",
        "first rows after": f"{first_rows_after:.0f} s",
        "measured": f"{window:.0f} s",
        "polls/s (agent's, at the target)": round(
            (after.answered - before.answered) / window
        ),
        "results stored/s": round(rows / window),
        "web CPU / result": per_result(web_cpu, rows),
        "database CPU / result": per_result(db_cpu, rows),
        "server CPU / result": per_result(web_cpu + db_cpu, rows),
        "server cores": f"{(web_cpu + db_cpu) / window:.2f}",
        # Every AGENT_SYNC_SECONDS whatever the load: the projects saved
        # since the last; every 30 s also the ids of all of them.
        "one sync's server CPU, with all ids / without": (
            f"{sync_cpu[True] * 1000:.0f} / {sync_cpu[False] * 1000:.0f} ms"
        ),
        "agent CPU / poll": per_result(
            agent_cpu, max(after.answered - before.answered, 1)
        ),
        "poll to row p50/p99 (s)": (
            f"{(percentile_ms(delays, 0.5) or 0) / 1000:.2f} / "
            f"{(percentile_ms(delays, 0.99) or 0) / 1000:.2f}"
            f" ({len(delays)} rows)"
        ),
        # Whole run, after the agent stopped: every poll the target
        # answered is a row or still on the agent's disk, none twice.
        "target answered": answered,
        "agent polls": agent_polls,
        "rows": stored,
        "rows down": down,
        "left on agent's disk": left_on_disk,
        # Every poll the target answered is an up row (or still on the
        # agent's disk); a down row is a poll it did not answer in time.
        "lost (target's count)": lost(answered, stored - down, left_on_disk),
        "lost (agent's count)": lost(agent_polls, stored, left_on_disk),
        "twice": stored - windows,
    }


def lost(polls: int | None, rows: int, left_on_disk: int | None) -> int | str:
    """Polls neither stored nor on the agent's disk; "?" when the agent
    did not say (it did not stop cleanly)."""
    if polls is None or left_on_disk is None:
        return "?"
    return polls - rows - left_on_disk


def per_result(cpu_seconds: float, results: int) -> str:
    return f"{cpu_seconds / max(results, 1) * 1e6:.0f} µs"


def start_agent(
    web: Web, token: str, max_concurrent: int | None
) -> tuple[subprocess.Popen, Path]:
    """runagent with no database setting, its output in a file."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
    }
    env.update(ENV_FILE="/nonexistent", AGENT_TOKEN=token, LOG_LEVEL="WARNING")
    folder = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    log = folder / "agent.log"
    agent = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "runagent",
            "--server",
            f"http://127.0.0.1:{web.port}",
            "--buffer",
            str(folder / "buffer.sqlite3"),
            *(["--max-concurrent", str(max_concurrent)] if max_concurrent else []),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    return agent, log


def one_sync_cpu(token: str, *, ids: bool) -> float:
    """CPU seconds the server spends on one of the agent's periodic syncs
    (the view run in this process, and its database backend); the median
    of three."""
    from django.test import RequestFactory

    from polling.agents.views import sync

    body = json.dumps({"since": datetime.now(UTC).isoformat(), "ids": ids})
    costs = []
    for _ in range(3):
        before = time.process_time() + own_backend_cpu()
        request = RequestFactory().post(
            "/api/v1/agent/sync/",
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        if sync(request).status_code != 200:
            raise SystemExit("the bench's own sync was refused")
        costs.append(time.process_time() + own_backend_cpu() - before)
    return sorted(costs)[1]


def settings_stop_timeout() -> int:
    from django.conf import settings

    return settings.POLLER_STOP_TIMEOUT


@dataclass(frozen=True, slots=True)
class Reading:
    """Counters at one moment of the measured window."""

    at: float
    rows: int
    answered: int
    web_cpu: float
    db_cpu: float

    @classmethod
    def take(cls, web: Web, target, results) -> Reading:
        web_cpu, db_cpu = web.cpu_seconds()
        return cls(
            at=time.monotonic(),
            rows=results.count(),
            answered=target.requests(),
            web_cpu=web_cpu,
            # This process's own backend (counting, sampling) is not the
            # server's cost.
            db_cpu=db_cpu - own_backend_cpu(),
        )


def own_backend_cpu() -> float:
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return process_cpu_seconds(cursor.fetchone()[0])


class DelaySampler:
    """The delay from poll to row, read from a sample of projects' newest
    rows: a row's poll began at its window (`polled_at`, plus the agent's
    lag), and it was stored before the look that first saw it."""

    def __init__(self, results, project_ids: list[int]) -> None:
        self._results = results.filter(project_id__in=project_ids)
        self.delays: list[float] = []
        self._newest = self._read()

    def look(self) -> None:
        newest = self._read()
        now = datetime.now(UTC)
        for project_id, polled_at in newest.items():
            if polled_at != self._newest.get(project_id):
                self.delays.append((now - polled_at).total_seconds())
        self._newest = newest

    def _read(self) -> dict[int, datetime]:
        from django.db.models import Max

        rows = self._results.values("project_id").annotate(newest=Max("polled_at"))
        return {row["project_id"]: row["newest"] for row in rows}


if __name__ == "__main__":
    main()
