"""Benchmark: PollResult's bytes per poll, and pruning beside the writer.

    .venv/bin/python bench/bench_storage.py                 # both parts
    .venv/bin/python bench/bench_storage.py --part bytes    # or --part prune

Bytes per poll: for PostgreSQL and SQLite, a fresh database at the layout
before e7fe015 (migrations up to projects 0010) and one at the current
layout, each filled with the same polls in time order, a transaction per
minute of polls as the writer saves them; then VACUUM and ANALYZE and the
table and each index measured (projects.housekeeping.storage, as
`manage.py storage_report` does). A B-tree's size per row depends on how
many polls each project has (30 days at 60 s is 43,200), so the default
is fewer projects polled for longer: 200 projects, 5,000 polls each.

Pruning (PostgreSQL): a database holding --seed-rows polls past retention;
the poller's ResultWriter (polling.store.DatabaseResultStore, default batch
settings) saves 500 polls/s in a process of its own, first alone, then
while `prune_results` runs in another process. The projected disk use
takes the measured bytes per row of the current layout.

PG_URL (default postgres://postgres@127.0.0.1:5432) chooses the server;
BENCH_DB_SUFFIX names the databases (monitor_bench_storage_*_<suffix>).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

from harness import (
    ROOT,
    django_env,
    drop_database,
    fresh_database_url,
    machine,
    markdown_table,
    percentile_ms,
)

SUFFIX = os.environ.get("BENCH_DB_SUFFIX", "storage")
PG_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432") + "/postgres"
KINDS = {"PostgreSQL": PG_URL, "SQLite": ""}
LAYOUTS = {"before": "before e7fe015 (0010)", "after": "current"}
WARMUP_SECONDS = 5
TAIL_SECONDS = 5
RETENTION_DAYS = {"raw": 30, "hourly": 90, "daily": 1825}
POLLS_PER_DAY = 1440  # at 60 s


def step(database_url: str, *args: str) -> dict:
    """One step of bench/storage_db.py in a process of its own."""
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage_db.py"), *args],
        cwd=ROOT,
        env=django_env(database_url),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def measure_bytes(args: argparse.Namespace) -> dict:
    """{kind: {layout: the bytes step's answer}}."""
    measured: dict[str, dict] = {}
    for kind, base in KINDS.items():
        for layout in LAYOUTS:
            url = fresh_database_url(
                f"monitor_bench_storage_{layout}_{SUFFIX}", base=base
            )
            try:
                measured.setdefault(kind, {})[layout] = step(
                    url,
                    "bytes",
                    f"--layout={layout}",
                    f"--projects={args.projects}",
                    f"--polls={args.polls}",
                )
            finally:
                drop_database(url)
    return measured


def bytes_table(kind: str, layouts: dict) -> str:
    """One database: bytes per poll of the table and each index, before
    and after."""
    per_relation: dict[str, dict[str, str]] = {}
    for layout, answer in layouts.items():
        for name, relation_kind, _, per_row in answer["sizes"]["PollResult"][
            "relations"
        ]:
            label = f"{relation_kind} {name}"
            per_relation.setdefault(label, {})[layout] = f"{per_row:.1f}"
    rows = [
        {"relation": label, **{LAYOUTS[k]: v.get(k, "-") for k in LAYOUTS}}
        for label, v in per_relation.items()
    ]
    rows.append(
        {
            "relation": "**total bytes per poll**",
            **{
                LAYOUTS[
                    layout
                ]: f"**{answer['sizes']['PollResult']['bytes_per_row']:.1f}**"
                for layout, answer in layouts.items()
            },
        }
    )
    polls = layouts["after"]["sizes"]["PollResult"]["rows"]
    return f"{kind}, {polls:,} polls:\n\n{markdown_table(rows)}"


def projection_table(measured: dict) -> str:
    """Disk for the default retention at 60 s, from the current layout's
    bytes per row of polls and rollups."""
    rows = []
    for projects in (1_000, 10_000):
        row = {"projects": f"{projects:,}"}
        for kind, layouts in measured.items():
            sizes = layouts["after"]["sizes"]
            total = projects * (
                RETENTION_DAYS["raw"] * POLLS_PER_DAY * _per_row(sizes, "PollResult")
                + RETENTION_DAYS["hourly"] * 24 * _per_row(sizes, "HourlyRollup")
                + RETENTION_DAYS["daily"] * _per_row(sizes, "DailyRollup")
            )
            row[f"{kind}"] = f"{total / 2**30:,.1f} GiB"
        rows.append(row)
    return markdown_table(rows)


def per_row_table(measured: dict) -> str:
    rows = []
    for kind, layouts in measured.items():
        sizes = layouts["after"]["sizes"]
        rows.append(
            {
                "database": kind,
                "PollResult": f"{_per_row(sizes, 'PollResult'):.1f}",
                "HourlyRollup": f"{_per_row(sizes, 'HourlyRollup'):.1f}",
                "DailyRollup": f"{_per_row(sizes, 'DailyRollup'):.1f}",
            }
        )
    return markdown_table(rows)


def _per_row(sizes: dict, model: str) -> float:
    return sizes[model]["bytes_per_row"]


def measure_pruning(args: argparse.Namespace) -> dict:
    url = fresh_database_url(f"monitor_bench_storage_prune_{SUFFIX}", base=PG_URL)
    try:
        seeded = step(url, "seed", "--projects=1000", f"--rows={args.seed_rows}")
        writer = subprocess.Popen(
            [sys.executable, "bench/storage_db.py", "write", f"--rate={args.rate}"],
            cwd=ROOT,
            env=django_env(url),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(WARMUP_SECONDS + args.baseline)
            pruned = step(url, "prune")
            time.sleep(TAIL_SECONDS)
        finally:
            writer.send_signal(signal.SIGTERM)
            out, _ = writer.communicate(timeout=60)
        written = json.loads(out.splitlines()[-1])
    finally:
        drop_database(url)
    return {"seeded": seeded, "pruned": pruned, "written": written}


def pruning_table(result: dict, rate: float) -> str:
    pruned, saves = result["pruned"], result["written"]["saves"]
    first = saves[0][0] + WARMUP_SECONDS
    began, ended = pruned["began"], pruned["began"] + pruned["seconds"]
    alone = [took for at, took, _ in saves if first <= at < began]
    during = [took for at, took, _ in saves if began <= at < ended]
    prune_rate = pruned["rows"] / pruned["seconds"]
    rows = [
        {
            "writer at 500 polls/s": label,
            "batches": len(durations),
            "p50 batch ms": _ms(durations, 0.5),
            "p99 batch ms": _ms(durations, 0.99),
            "longest batch ms": _ms(durations, 1.0),
        }
        for label, durations in (("alone", alone), ("while pruning", during))
    ]
    summary = markdown_table(
        [
            {
                "polls pruned": f"{pruned['rows']:,}",
                "chunks": pruned["chunks"],
                "seconds": f"{pruned['seconds']:.1f}",
                "rows/s": f"{prune_rate:,.0f}",
                "x ingest": f"{prune_rate / rate:.0f}x",
                "writer p99 change": _change(alone, during),
            }
        ]
    )
    return f"{summary}\n\n{markdown_table(rows)}"


def _ms(durations: list[float], share: float) -> str:
    ms = percentile_ms(sorted(durations), share)
    return "-" if ms is None else f"{ms:.1f}"


def _change(alone: list[float], during: list[float]) -> str:
    if not alone or not during:
        return "-"
    before, after = float(_ms(alone, 0.99)), float(_ms(during, 0.99))
    return f"{(after - before) / before * 100:+.0f} %"


def commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["bytes", "prune", "all"], default="all")
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--polls", type=int, default=3000, help="per project")
    parser.add_argument("--seed-rows", type=int, default=5_000_000)
    parser.add_argument("--rate", type=float, default=500, help="polls/s")
    parser.add_argument("--baseline", type=float, default=60, help="seconds")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    print(f"Commit {commit()}; {machine()}.\n")
    if args.part in ("bytes", "all"):
        measured = measure_bytes(args)
        for kind, layouts in measured.items():
            print(bytes_table(kind, layouts), end="\n\n")
        print("Bytes per row, current layout:\n")
        print(per_row_table(measured), end="\n\n")
        print(
            "Projected disk, 60 s, retention 30 d raw / 90 d hourly / 1,825 d daily:\n"
        )
        print(projection_table(measured), end="\n\n")
    if args.part in ("prune", "all"):
        result = measure_pruning(args)
        print(
            f"Pruning {result['seeded']['rows']:,} polls past retention "
            f"(1,000 projects) on PostgreSQL, the writer at {args.rate:g} polls/s:\n"
        )
        print(pruning_table(result, args.rate))


if __name__ == "__main__":
    main()
