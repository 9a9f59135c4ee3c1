"""Benchmark: one agent at full pace, sending to the Procfile's web line.

Makes its own database (DATABASE_URL's server, or --db sqlite), migrates
it, adds --projects HTTP projects at --interval seconds polling a local
nginx (/ok), all in one region with one agent, and starts the Procfile's
`web` line (gunicorn, WEB_CONCURRENCY workers) on 127.0.0.1. Then it runs
`manage.py runagent` with no database setting for --duration seconds and
stops it with SIGTERM.

It reports, from outside the processes: the polls/s the target saw, the
rows stored in the agent's region (every one the target answered must be
there, none twice), the web process's and the database backends' CPU per
stored result, the agent's CPU per poll, and the delay from a poll's
start to its row (p50/p99: the row's `polled_at` window start against the
time the row was first seen, sampled every second).

    .venv/bin/python bench/bench_agent.py --projects 300000 --interval 60 --duration 180
    .venv/bin/python bench/bench_agent.py --db sqlite --projects 500 --interval 10
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

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
    setup_django,
)
from nginx import NginxTarget

CHUNK = 5000
# Rows are looked for this far back: a result delayed longer is not
# counted in the delay (the run says how many rows there are in all).
RECENT_SECONDS = 120


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    database = fresh_database_url(f"bench_agent_{args.suffix}", base=args.db)
    manage(database, "migrate", "--noinput")
    setup_django(database)
    with NginxTarget(workers=1) as target, Web(database, args.workers) as web:
        token, region = add_agent_and_projects(args, target.url("/ok"))
        web.wait_ready()
        row = run(args, web, target, token, region)
    row.update(database="PostgreSQL" if args.db else "SQLite")
    print(f"Machine: {machine()}; commit {git_head()}")
    print(markdown_table([row]))


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
    args = parser.parse_args()
    args.db = "" if args.db == "sqlite" else args.db
    return args


def add_agent_and_projects(args, url: str) -> tuple[str, object]:
    from projects.models import Agent, Project, Region

    region = Region.objects.create(name="bench-agents")
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
    _, token = Agent.issue("bench", region)
    return token, region


def run(args, web: Web, target, token: str, region) -> dict:
    from projects.models import PollResult

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
    }
    env.update(ENV_FILE="/nonexistent", AGENT_TOKEN=token, LOG_LEVEL="WARNING")
    buffer = tempfile.mkdtemp(prefix="bench-agent-")
    agent = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "runagent",
            "--server",
            f"http://127.0.0.1:{web.port}",
            "--buffer",
            f"{buffer}/buffer.sqlite3",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    web_before, backends_before = web.cpu_seconds()
    started, delays, recent = time.monotonic(), [], set()
    while time.monotonic() - started < args.duration:
        time.sleep(1)
        now = datetime.now(UTC)
        horizon = now - timedelta(seconds=RECENT_SECONDS)
        rows = PollResult.objects.filter(region=region, polled_at__gte=horizon)
        current = set(rows.values_list("project_id", "polled_at"))
        delays += [(now - at).total_seconds() for _, at in current - recent]
        recent = current
    agent_cpu = process_cpu_seconds(agent.pid)
    agent.send_signal(signal.SIGTERM)
    agent.wait(timeout=120)
    web_after, backends_after = web.cpu_seconds()
    stored = PollResult.objects.filter(region=region).count()
    windows = (
        PollResult.objects.filter(region=region)
        .values("project_id", "polled_at")
        .distinct()
        .count()
    )
    answered = target.requests()
    delays.sort()
    return {
        "projects": args.projects,
        "interval": f"{args.interval} s",
        "polls/s at the target": round(answered / args.duration),
        "target answered": answered,
        "rows": stored,
        "rows twice": stored - windows,
        "web CPU / result": f"{(web_after - web_before) / max(stored, 1) * 1e6:.0f} µs",
        "database CPU / result": (
            f"{(backends_after - backends_before) / max(stored, 1) * 1e6:.0f} µs"
        ),
        "agent CPU / poll": f"{agent_cpu / max(answered, 1) * 1e6:.0f} µs",
        "poll to row p50/p99 (s)": (
            f"{(percentile_ms(delays, 0.5) or 0) / 1000:.1f} / "
            f"{(percentile_ms(delays, 0.99) or 0) / 1000:.1f}"
        ),
    }


if __name__ == "__main__":
    main()
