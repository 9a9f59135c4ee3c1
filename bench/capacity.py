"""Capacity benchmark: how many projects one runpoller keeps on time.

    .venv/bin/python bench/capacity.py \\
        --db sqlite --db postgres://postgres@127.0.0.1:5432/postgres

Starts nginx (the fast target) and bench/targets.py (1 s responses and
hanging requests) on 127.0.0.1, then for each database runs every scenario
in a fresh copy of a migrated database: `manage.py runpoller` against N
projects, the seed-style naive poller, and the result writer alone; once,
the bare httpx loop. It prints a markdown table and the verdicts against
issue #6's targets, and publishes them as a run log of its own,
docs/benchmarks/<date>-capacity-<HHMM>.md (bench/run_logs.py).

    --only fast-30k,sat     run the scenarios named, or starting with these
    --quick                 a smoke run: N / 20, intervals / 6, 15 s windows;
                            nothing is published unless --append is given
    --duration S            measured seconds per scenario, except where the
                            window is part of the target (scale-300k: 300 s)
    --projects N            N projects in every scenario chosen: a check at
                            a small scale (internet-100k at 10,000)

The check kinds (issues #41 and #43): `--only kinds,kind,services` runs
HTTP beside pings and DNS checks, HTTP beside service checks, and each
kind alone, against the targets bench/kinds.py starts on loopback.

See docs/benchmarks/capacity-method.md for what each column means. A full run
takes about 40 minutes per database; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path

from harness import (
    ROOT,
    TargetProcess,
    cpu_model,
    database_versions,
    drop_database,
    fresh_database_url,
    git_head,
    is_postgres,
    machine,
    manage,
    raise_open_files_limit,
    relative_command,
)
from internet import InternetTarget
from kinds import KindTargets
from nginx import NginxTarget
from report import Result, publish, section
from run_logs import publish_run
from runs import (
    Targets,
    run_bare,
    run_engine,
    run_internet,
    run_internet_loop,
    run_kinds,
    run_naive,
    run_writer,
)
from scenarios import Scenario, pick, with_projects

# BENCH_DB_SUFFIX keeps the databases of people benchmarking side by side
# apart.
_SUFFIX = (
    f"_{os.environ['BENCH_DB_SUFFIX']}" if os.environ.get("BENCH_DB_SUFFIX") else ""
)
TEMPLATE_DB = f"monitor_bench_capacity_template{_SUFFIX}"
RUN_DB = f"monitor_bench_capacity_run{_SUFFIX}"
QUICK_MEASURE_SECONDS = 15


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    scenarios = chosen_scenarios(args)
    results: list[Result] = []
    writer: list[dict] = []
    internet_wanted = any(s.target == "internet" for s in scenarios)
    kinds_wanted = {kind for s in scenarios for kind, _ in s.mix}
    with (
        NginxTarget(workers=args.nginx_workers) as nginx,
        TargetProcess() as slow,
        InternetTarget(workers=args.nginx_workers)
        if internet_wanted
        else contextlib.nullcontext() as internet,
        KindTargets(kinds_wanted, nginx)
        if kinds_wanted
        else contextlib.nullcontext() as kinds,
    ):
        targets = Targets(nginx, slow, internet, kinds)
        for scenario in (s for s in scenarios if s.kind == "bare"):
            results.append(guarded(run_bare, scenario, "-", targets))
        for scenario in (s for s in scenarios if s.kind == "internet-loop"):
            results.append(guarded(run_internet_loop, scenario, "-", targets))
        in_database = [s for s in scenarios if s.kind not in ("bare", "internet-loop")]
        for database in args.db if in_database else []:
            run_database(database, in_database, targets, results, writer)
    text = section(results, writer, title=title(args), preamble=preamble(args))
    print(f"\n{text}")
    if args.json:
        Path(args.json).write_text(json.dumps(raw(results, writer), indent=1))
    if args.append:
        publish(Path(args.append), text)
    elif not args.quick:
        print(f"Published: {publish_run('capacity', text).relative_to(ROOT)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db",
        action="append",
        help="database URL, or 'sqlite' (repeatable; default DATABASE_URL or sqlite)",
    )
    parser.add_argument("--only", help="comma-separated scenario names or prefixes")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--duration", type=float, help="measured seconds, each")
    parser.add_argument(
        "--projects", type=int, help="projects of every scenario chosen (a small check)"
    )
    parser.add_argument("--nginx-workers", type=int, default=1)
    parser.add_argument(
        "--append",
        metavar="FILE",
        help="add the report to FILE instead of a new run log in docs/benchmarks/",
    )
    parser.add_argument("--json", metavar="FILE", help="also save raw numbers")
    args = parser.parse_args()
    default = os.environ.get("DATABASE_URL") or "sqlite"
    args.db = [("" if db == "sqlite" else db) for db in (args.db or [default])]
    return args


def chosen_scenarios(args: argparse.Namespace) -> list[Scenario]:
    scenarios = pick(args.only.split(",") if args.only else None)
    if args.projects:
        scenarios = [
            with_projects(s, args.projects) if s.projects else s for s in scenarios
        ]
    if args.quick:
        return [s.quick(args.duration or QUICK_MEASURE_SECONDS) for s in scenarios]
    if args.duration:
        return [
            s if s.fixed_measure else dataclasses.replace(s, measure=args.duration)
            for s in scenarios
        ]
    return scenarios


def run_database(database, scenarios, targets, results, writer) -> None:
    label = "PostgreSQL" if is_postgres(database) else "SQLite (WAL)"
    template = fresh_database_url(TEMPLATE_DB, base=database)
    try:
        manage(template, "migrate", "--noinput")
        for scenario in scenarios:
            url = fresh_database_url(RUN_DB, base=database, template=template)
            try:
                if scenario.kind == "writer":
                    writer.append(guarded(run_writer, scenario, label, url, targets))
                else:
                    runner = {
                        "engine": run_engine,
                        "internet": run_internet,
                        "kinds": run_kinds,
                    }.get(scenario.kind, run_naive)
                    results.append(guarded(runner, scenario, label, url, targets))
            finally:
                drop_database(url)
    finally:
        drop_database(template)


def guarded(runner, scenario: Scenario, label: str, *args):
    """Run one scenario; a failure becomes a row saying so, and the run
    goes on to the next scenario."""
    print(f"== {label} {scenario.name}", file=sys.stderr, flush=True)
    try:
        return runner(scenario, label, *args)
    except Exception as error:
        traceback.print_exc()
        if scenario.kind == "writer":
            return {"database": label, "error": str(error)}
        return Result(scenario, label, "failed", extra={"error": str(error)})


# The report


def title(args: argparse.Namespace) -> str:
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    return f"Capacity run {when}" + (" (smoke run, --quick)" if args.quick else "")


def preamble(args: argparse.Namespace) -> list[str]:
    command = relative_command(sys.argv)
    lines = [
        f"- machine: {machine()}, {cpu_model()}",
        f"- databases: {database_versions(args.db)}",
        f"- command: `{command}`",
        f"- nginx {args.nginx_workers} worker(s); git {git_head()}",
    ]
    if args.quick:
        lines.append("- a smoke run: small N, short windows; not evidence either way")
    return lines


def raw(results: list[Result], writer: list[dict]) -> dict:
    def plain(result: Result) -> dict:
        return {**dataclasses.asdict(result), "scenario": result.scenario.name}

    return {"results": [plain(r) for r in results], "writer": writer}


if __name__ == "__main__":
    main()
