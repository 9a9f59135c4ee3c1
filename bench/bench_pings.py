"""Benchmark: the ping endpoint under a steady load and under a herd.

Each run makes its own database (PostgreSQL or SQLite, like the other
benchmarks: DATABASE_URL, or --db), migrates it, adds heartbeat projects
(every hour, a minute's grace) and starts the Procfile's `web` line as it
is (access log on) on 127.0.0.1, with WEB_CONCURRENCY workers.

- `sustained`: wrk keeps C connections busy for --duration seconds at each
  C of --connections; the figure is the most pings/s of a step whose p99
  stayed under 100 ms with no error (every ping answered 200). Stored rows
  are counted after each step (a ping in flight when wrk stops may be
  stored without being counted by wrk, never the reverse).
- `herd`: --projects pings, one per project, sent as fast as --connections
  connections get answers (`run_herd` in ping_load.py); with --retry, a 503
  is sent again after its Retry-After, as `curl --retry` does. Then every
  project answered 2xx must have exactly one stored result, and none
  other. A page of the site is fetched every 0.25 s meanwhile.

Both report the CPU the web process (all workers) and the database
backends used per ping.

    .venv/bin/python bench/bench_pings.py sustained --projects 2000 \
        --connections 16,64,256 --duration 20
    .venv/bin/python bench/bench_pings.py herd --projects 100000 --connections 256
    .venv/bin/python bench/bench_pings.py herd ... --db sqlite --publish
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import (
    ROOT,
    BackendCpu,
    django_env,
    free_port,
    fresh_database_url,
    git_head,
    is_postgres,
    machine,
    manage,
    markdown_table,
    percentile_ms,
    process_cpu_seconds,
    process_tree,
    raise_open_files_limit,
    setup_django,
)
from ping_load import SiteProbe, run_herd, run_wrk
from run_logs import publish_run

P99_LIMIT_MS = 100.0
# The overview: a redirect to the sign-in page, through all of Django.
SITE_PAGE = "/"


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    database = fresh_database_url(f"bench_pings_{args.suffix}", base=args.db)
    manage(database, "migrate", "--noinput")
    setup_django(database)
    keys = add_projects(args.projects)
    load_before = os.getloadavg()[0]
    with Web(database, args.workers) as web:
        web.wait_ready()
        if args.mode == "sustained":
            rows = sustained(args, web, keys)
        else:
            rows = herd(args, web, keys)
    report = make_report(args, database, rows, load_before)
    print(report)
    if args.publish:
        print(f"Published: {publish_run('pings-' + args.mode, report)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["sustained", "herd"])
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument(
        "--connections", default="256", help="comma-separated, e.g. 16,64,256"
    )
    parser.add_argument("--duration", type=float, default=20, help="s a step")
    parser.add_argument("--retry", action="store_true", help="herd: resend 503s")
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2))
    )
    parser.add_argument(
        "--db",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"),
        help="a database URL whose server to use, or 'sqlite'",
    )
    parser.add_argument("--suffix", default=os.environ.get("BENCH_DB_SUFFIX", "run"))
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    args.connections = [int(c) for c in args.connections.split(",")]
    args.db = "" if args.db == "sqlite" else args.db
    return args


def add_projects(count: int) -> list[str]:
    """`count` heartbeat projects, made through the models so every column
    gets its default; their ping keys."""
    from projects.models import Project

    deadline = datetime.now(UTC) + timedelta(hours=2)
    keys = []
    for first in range(0, count, 5000):
        made = Project.objects.bulk_create(
            Project(
                name=f"bench heartbeat {n}",
                kind=Project.Kind.HEARTBEAT,
                interval=1,
                interval_unit=Project.IntervalUnit.HOURS,
                ping_key=uuid.uuid4(),
                ping_deadline=deadline,
            )
            for n in range(first, min(first + 5000, count))
        )
        keys += [str(project.ping_key) for project in made]
    return keys


class Web:
    """The Procfile's web process on 127.0.0.1 only, and the CPU it and
    the database's backends use."""

    def __init__(self, database: str, workers: int) -> None:
        self.port = free_port()
        line = procfile_web().replace("0.0.0.0", "127.0.0.1")
        self.command = ["sh", "-c", f"exec {line}"]
        self.env = django_env(
            database,
            PORT=str(self.port),
            WEB_CONCURRENCY=str(workers),
            HTTPS="false",
            ALLOWED_HOSTS="127.0.0.1",
            LOG_LEVEL="WARNING",
            # Counted as always, never refused: a steady load goes round
            # the projects faster than 60 pings a minute each.
            PING_RATE_LIMIT="1000000",
            PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        )
        self.backends = BackendCpu(database) if is_postgres(database) else None
        self.database = database

    def __enter__(self) -> Web:
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL
        )
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)

    def cpu_seconds(self) -> tuple[float, float]:
        """(web, database backends) CPU seconds so far."""
        web = sum(process_cpu_seconds(pid) for pid in process_tree(self.process.pid))
        return web, self.backends() if self.backends else 0.0

    def commits(self) -> int:
        """Transactions committed in the database so far (PostgreSQL; 0 on
        SQLite). Backends report them within a second, hence the wait."""
        if self.backends is None:
            return 0
        import psycopg

        time.sleep(1.5)
        server, _, name = self.database.rpartition("/")
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            return admin.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [name]
            ).fetchone()[0]

    def wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}{SITE_PAGE}", timeout=5)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise SystemExit("the web process did not answer within 60 s")


def procfile_web() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise SystemExit("the Procfile has no web process")


def stored() -> tuple[int, int]:
    """(results, projects with a result)."""
    from projects.models import PollResult

    results = PollResult.objects.count()
    return results, PollResult.objects.values("project").distinct().count()


def cpu_per_ping(before, after, pings: int, commits: int) -> dict[str, str]:
    """CPU per ping of the web process and the database's backends, and
    pings per committed transaction (the group commit's batches)."""
    if not pings:
        return {"web µs/ping": "-", "db µs/ping": "-"}
    web, db = (round((a - b) / pings * 1e6) for a, b in zip(after, before, strict=True))
    return {
        "web µs/ping": f"{web:,}",
        "db µs/ping": f"{db:,}" if db else "-",
        "pings/commit": f"{pings / commits:.1f}" if commits > 0 else "-",
    }


# Sustained ---------------------------------------------------------------------


def sustained(args, web: Web, keys: list[str]) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".keys") as keys_file:
        keys_file.write("\n".join(keys) + "\n")
        keys_file.flush()
        run_wrk(web.port, Path(keys_file.name), 16, 3)  # warm-up: connections, plans
        rows = []
        for connections in args.connections:
            rows_before, _ = stored()
            cpu_before, commits = web.cpu_seconds(), web.commits()
            result = run_wrk(web.port, Path(keys_file.name), connections, args.duration)
            cpu_after, commits = web.cpu_seconds(), web.commits() - commits
            rows.append(sustained_row(result, stored()[0] - rows_before))
            rows[-1].update(
                cpu_per_ping(cpu_before, cpu_after, result.requests, commits)
            )
    best = [float(r["pings/s"]) for r in rows if r["p99 < 100 ms, 0 errors"] == "yes"]
    print(f"Sustained at p99 < 100 ms with 0 errors: {max(best, default=0):,.0f}/s")
    return rows


def sustained_row(result, stored_rows: int) -> dict:
    p99 = result.percentiles_ms.get("99", float("inf"))
    within = p99 < P99_LIMIT_MS and result.errors == 0
    return {
        "connections": result.connections,
        "pings/s": f"{result.per_second:.0f}",
        "p50 ms": result.percentiles_ms.get("50"),
        "p90 ms": result.percentiles_ms.get("90"),
        "p99 ms": p99,
        "errors": f"{result.non_2xx} non-2xx, {result.socket_errors} socket",
        "answered / stored": f"{result.requests:,} / {stored_rows:,}",
        "p99 < 100 ms, 0 errors": "yes" if within else "no",
    }


# Herd --------------------------------------------------------------------------


def herd(args, web: Web, keys: list[str]) -> list[dict]:
    rows = []
    for connections in args.connections:
        from projects.models import PollResult

        PollResult.objects.all().delete()
        cpu_before, commits = web.cpu_seconds(), web.commits()
        with SiteProbe(web.port, SITE_PAGE) as site:
            result = run_herd(web.port, keys, connections, retry=args.retry)
        cpu_after, commits = web.cpu_seconds(), web.commits() - commits
        rows.append(herd_row(result, connections, keys, site))
        rows[-1].update(cpu_per_ping(cpu_before, cpu_after, len(keys), commits))
    return rows


def herd_row(result, connections: int, keys: list[str], site: SiteProbe) -> dict:
    results, projects = stored()
    answered = len(result.answered_2xx)
    lost = answered - projects_stored_among(result.answered_2xx)
    latencies = sorted(result.latencies)
    statuses = ", ".join(f"{s}: {n:,}" for s, n in sorted(result.statuses.items()))
    failures = ", ".join(f"{k}: {n}" for k, n in result.failures.items()) or "0"
    site_latencies = sorted(site.latencies)
    return {
        "pings (projects)": f"{len(keys):,}",
        "connections": connections,
        "until the last answer": f"{result.seconds:.1f} s",
        "pings/s": f"{len(keys) / result.seconds:,.0f}",
        "answers": statuses,
        "503s sent again": f"{result.retried:,}",
        "no answer": failures,
        "2xx p50 / p99 ms": f"{percentile_ms(latencies, 0.5)} / "
        f"{percentile_ms(latencies, 0.99)}",
        "stored: rows / projects": f"{results:,} / {projects:,}",
        "2xx not stored": f"{lost:,}",
        "stored twice": f"{results - projects:,}",
        f"site {SITE_PAGE} p50 / max ms": f"{percentile_ms(site_latencies, 0.5)} / "
        f"{percentile_ms(site_latencies, 1.0)}"
        + (f", errors {site.errors}" if site.errors else ""),
    }


def projects_stored_among(keys: set[str]) -> int:
    from projects.models import PollResult

    stored_keys = {
        str(k) for k in PollResult.objects.values_list("project__ping_key", flat=True)
    }
    return len(keys & stored_keys)


# Report ------------------------------------------------------------------------


def make_report(args, database: str, rows: list[dict], load_before: float) -> str:
    kind = "PostgreSQL" if is_postgres(database) else "SQLite"
    title = {"sustained": "steady load (wrk)", "herd": "a herd, one ping a project"}
    return (
        f"### Ping endpoint, {title[args.mode]}, {kind} "
        f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n"
        f"`{procfile_web()}` with WEB_CONCURRENCY={args.workers}; "
        f"{args.projects:,} heartbeat projects; {machine()}; at {git_head()}; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
        "(other work on the machine shows here).\n\n"
        f"`bench/bench_pings.py {' '.join(sys.argv[1:])}`\n\n"
        f"{markdown_table(rows)}\n"
    )


if __name__ == "__main__":
    main()
