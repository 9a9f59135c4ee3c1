"""Benchmark: several pollers on one machine (issue #14).

    BENCH_DB_SUFFIX=fleet /work/team/bin/run-bench \\
        .venv/bin/python bench/bench_fleet.py

On PostgreSQL (a database of its own, created and dropped here), against
nginx on 127.0.0.1 (the fast target, bench/nginx.py), every run on a fresh
copy of a migrated database holding the projects:

1. Saturation: 30,000 projects every 3 s (10,000 polls/s wanted, more than
   one process makes), 50 polls in flight per poller: `runpoller` against
   `runpoller --processes 2`.
2. Coordination, at a load one process keeps up with: 5,000 projects every
   10 s (500 polls/s): runpoller without shard leases (bench/lone_poller.py:
   runpoller wired as on SQLite), runpoller (one poller on leases), and
   runpoller --processes 2.

Each run: --warmup seconds (first polls spread, the shards split between
the pollers), then --measure seconds measured (bench/poller_run.py). Polls,
rows written and lease statements are the pollers' own counters (GET
/status; pg_stat_statements is not loaded on the shared server); CPU is
read from /proc for the poller's process tree, nginx's, and the PostgreSQL
backends serving the database.

    --quick         a smoke run: fewer projects, 10 s windows, nothing
                    published unless --append is given
    --only sat      or "load": one part
    --repeat N      every run N times, in rounds (a, b, c, a, b, c), so
                    other work on the shared machine shows as spread; the
                    verdicts take each run's least CPU per poll

It prints the tables and publishes them, with the command and the commit,
as a run log of its own, docs/benchmarks/<date>-fleet-<HHMM>.md
(bench/run_logs.py); --append FILE adds them to FILE instead. PG_URL (default
postgres://postgres@127.0.0.1:5432) chooses the server, BENCH_DB_SUFFIX
names the databases (monitor_bench_fleet_*_<suffix>).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from harness import (
    ROOT,
    BackendCpu,
    ProcessSample,
    cpu_model,
    database_versions,
    drop_database,
    fresh_database_url,
    git_head,
    machine,
    manage,
    markdown_table,
    raise_open_files_limit,
    relative_command,
)
from nginx import NginxTarget
from poller_run import PollerReport, PollerRun
from report import publish
from run_logs import publish_run
from runs import Targets, prepare
from scenarios import Scenario

MARKER = "<!-- fleet-results: bench/bench_fleet.py inserts new runs above -->"
SUFFIX = os.environ.get("BENCH_DB_SUFFIX", "fleet")
PG_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432") + "/postgres"
EXTRA_CPU_LIMIT = 0.05  # issue #14: coordination costs < 5 % CPU per poll
RUNPOLLER = [sys.executable, "manage.py", "runpoller"]
LONE = [sys.executable, str(ROOT / "bench" / "lone_poller.py")]


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    processes: int
    command: list[str]
    leases: bool = True


SATURATION = [Run("1 poller", 1, RUNPOLLER), Run("2 pollers", 2, RUNPOLLER)]
COORDINATION = [
    Run("1 poller, no leases", 1, LONE, leases=False),
    Run("1 poller, leases", 1, RUNPOLLER),
    Run("2 pollers, leases", 2, RUNPOLLER),
]


@dataclasses.dataclass
class Measured:
    run: Run
    report: PollerReport
    round: int = 1

    def label(self, rounds: int) -> str:
        return self.run.name + (f", #{self.round}" if rounds > 1 else "")

    def per_s(self, count: str) -> float | None:
        value = self.report.window_counts.get(count)
        return None if value is None else value / self.report.window_s

    @property
    def polls_per_s(self) -> float | None:
        return self.per_s("polls_total")

    @property
    def cpu_per_poll_us(self) -> float | None:
        polls = self.polls_per_s
        return self.report.cpu_percent / 100 / polls * 1e6 if polls else None

    def meter(self, name: str) -> float:
        return self.report.meter_rates[name]

    def other_cpu_percent(self) -> float:
        """The machine's CPU besides the pollers, nginx and the database's
        backends: the harness, the server's own processes, anyone else."""
        return (
            self.report.machine_cpu_percent
            - self.report.cpu_percent
            - 100 * self.meter("nginx_cpu")
            - 100 * self.meter("postgres_cpu")
        )

    def shards(self) -> str:
        held = sorted(s.get("shards_held", 0) for s in self.report.statuses_at_end)
        return " / ".join(str(h) for h in held) if self.run.leases else "-"


def main() -> None:
    args = parse_args()
    raise_open_files_limit()
    parts = {}
    with NginxTarget(workers=1) as nginx:
        if args.only in (None, "sat"):
            parts["sat"] = measure_part(args, args.saturation, SATURATION, nginx)
        if args.only in (None, "load"):
            parts["load"] = measure_part(args, args.load, COORDINATION, nginx)
    text = section(args, parts)
    print(f"\n{text}")
    if args.append:
        publish(Path(args.append), text, marker=MARKER)
    elif not args.quick:
        print(f"Published: {publish_run('fleet', text).relative_to(ROOT)}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["sat", "load"])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--warmup", type=float, default=20, help="seconds")
    parser.add_argument("--measure", type=float, default=40, help="seconds")
    parser.add_argument(
        "--append",
        metavar="FILE",
        help="add the report to FILE instead of a new run log in docs/benchmarks/",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds of runs")
    args = parser.parse_args()
    divisor = 5 if args.quick else 1
    if args.quick:
        args.warmup, args.measure = min(args.warmup, 15), min(args.measure, 10)
    args.saturation = Scenario(
        "fleet-sat", "engine", 30_000 // divisor, interval=3, concurrency=50
    )
    args.load = Scenario(
        "fleet-load", "engine", 5_000 // divisor, interval=10, concurrency=100
    )
    return args


def measure_part(args, scenario: Scenario, runs: list[Run], nginx) -> list[Measured]:
    """The projects prepared once; each run on a fresh copy of them."""
    template = fresh_database_url(f"monitor_bench_fleet_template_{SUFFIX}", base=PG_URL)
    try:
        manage(template, "migrate", "--noinput")
        prepare(template, scenario, Targets(nginx, slow=None))
        return [
            dataclasses.replace(
                measure_run(args, scenario, run, template, nginx), round=number
            )
            for number in range(1, args.repeat + 1)
            for run in runs
        ]
    finally:
        drop_database(template)


def measure_run(args, scenario: Scenario, run: Run, template: str, nginx):
    print(f"== {scenario.name}: {run.name}", file=sys.stderr, flush=True)
    url = fresh_database_url(
        f"monitor_bench_fleet_run_{SUFFIX}", base=PG_URL, template=template
    )
    nginx_cpu = ProcessSample(nginx.process.pid, descendants=True)
    try:
        poller = PollerRun(
            url,
            projects=scenario.projects,
            max_concurrent=scenario.max_concurrent(),
            processes=run.processes,
            command=run.command,
            meters={
                "target_requests": nginx.requests,
                "nginx_cpu": lambda: _cpu(nginx_cpu),
                "postgres_cpu": BackendCpu(url),
            },
        )
        report = poller.run(warmup=args.warmup, measure=args.measure)
    finally:
        drop_database(url)
    if report.exit_code != 0:
        print("\n".join(report.log_tail), file=sys.stderr)
        raise RuntimeError(f"{run.name} exited with {report.exit_code}")
    return Measured(run, report)


def _cpu(sample: ProcessSample) -> float:
    sample.read()
    return sample.cpu_seconds


# The report


def saturation_table(measured: list[Measured], rounds: int) -> str:
    alone = {m.round: m.polls_per_s for m in measured if m.run.processes == 1}
    return markdown_table(
        [
            {
                "run": m.label(rounds),
                "polls/s": _num(m.polls_per_s),
                "x 1 poller": _ratio(m.polls_per_s, alone.get(m.round)),
                "rows written/s": _num(m.per_s("results_written")),
                "skipped ticks/s": _num(m.per_s("skipped_ticks")),
                "pollers' CPU": _num(m.report.cpu_percent, " %"),
                "CPU per poll": _num(m.cpu_per_poll_us, " µs"),
                "nginx CPU": _num(100 * m.meter("nginx_cpu"), " %"),
                "PostgreSQL backends' CPU": _num(100 * m.meter("postgres_cpu"), " %"),
                "machine CPU": _num(m.report.machine_cpu_percent, " %"),
                "others' CPU": _num(m.other_cpu_percent(), " %"),
                "target's share": _share(m),
                "lease statements/s": _num(m.per_s("lease_statements"), "", 1),
                "shards held": m.shards(),
            }
            for m in measured
        ]
    )


def coordination_table(measured: list[Measured], rounds: int) -> str:
    baseline = {m.round: m.cpu_per_poll_us for m in measured if not m.run.leases}
    return markdown_table(
        [
            {
                "run": m.label(rounds),
                "polls/s": _num(m.polls_per_s),
                "pollers' CPU": _num(m.report.cpu_percent, " %"),
                "CPU per poll": _num(m.cpu_per_poll_us, " µs"),
                "vs no leases": _change(m.cpu_per_poll_us, baseline.get(m.round)),
                "PostgreSQL backends' CPU": _num(100 * m.meter("postgres_cpu"), " %"),
                "nginx CPU": _num(100 * m.meter("nginx_cpu"), " %"),
                "machine CPU": _num(m.report.machine_cpu_percent, " %"),
                "others' CPU": _num(m.other_cpu_percent(), " %"),
                "lease statements/s": _num(m.per_s("lease_statements"), "", 1),
                "lag p99 (worst sample)": _num(m.report.lag_ms()[1], " ms"),
                "peak RSS": _num(m.report.peak_rss_mb, " MB"),
                "shards held": m.shards(),
            }
            for m in measured
        ]
    )


def verdicts(parts: dict) -> list[str]:
    lines = []
    if "sat" in parts:
        best = _best(parts["sat"], lambda m: -(m.polls_per_s or 0))
        one, two = (best[run.name] for run in SATURATION)
        lines.append(
            f"- 2 pollers at saturation: {_ratio(two.polls_per_s, one.polls_per_s)}"
            f" the polls/s of 1 (best of each; the target took {_share(two)} of"
            " the machine's CPU in that run)"
        )
    if "load" in parts:
        best = _best(parts["load"], lambda m: m.cpu_per_poll_us or float("inf"))
        baseline, *others = (best[run.name] for run in COORDINATION)
        for m in others:
            extra = _extra(m.cpu_per_poll_us, baseline.cpu_per_poll_us)
            ok = extra is not None and extra < EXTRA_CPU_LIMIT
            lines.append(
                f"- {'PASS' if ok else 'FAIL'} {m.run.name}: CPU per poll "
                f"{_change(m.cpu_per_poll_us, baseline.cpu_per_poll_us)} against "
                f"1 poller without leases (least of each; < {EXTRA_CPU_LIMIT:.0%})"
            )
    return lines


def _best(measured: list[Measured], key) -> dict[str, Measured]:
    """Each run's best round by `key` (least first): other people's work
    only ever makes a window worse."""
    best: dict[str, Measured] = {}
    for m in sorted(measured, key=key):
        best.setdefault(m.run.name, m)
    return best


def section(args, parts: dict) -> str:
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    quick = " (smoke run, --quick)" if args.quick else ""
    lines = [
        f"#### Fleet run {when}{quick}",
        "",
        f"- machine: {machine()}, {cpu_model()}; {database_versions([PG_URL])}",
        f"- command: `{relative_command(sys.argv)}`",
        f"- git {git_head()}",
        f"- each run: {args.warmup:g} s warm-up, {args.measure:g} s measured"
        + (f", {args.repeat} rounds" if args.repeat > 1 else ""),
        "",
    ]
    if "sat" in parts:
        lines += [_scenario_line("Saturation", args.saturation), ""]
        lines += [saturation_table(parts["sat"], args.repeat), ""]
    if "load" in parts:
        lines += [_scenario_line("Coordination", args.load), ""]
        lines += [coordination_table(parts["load"], args.repeat), ""]
    return "\n".join([*lines, *verdicts(parts), ""])


def _scenario_line(title: str, scenario: Scenario) -> str:
    return (
        f"{title}: {scenario.projects:,} projects every {scenario.interval} s "
        f"({scenario.wanted_polls_per_s:,.0f} polls/s wanted), "
        f"{scenario.max_concurrent()} polls in flight per poller:"
    )


def _share(m: Measured) -> str:
    machine_cpu = m.report.machine_cpu_percent
    if not machine_cpu:
        return "-"
    return f"{100 * 100 * m.meter('nginx_cpu') / machine_cpu:.0f} %"


def _extra(value: float | None, baseline: float | None) -> float | None:
    if not (value and baseline):
        return None
    return value / baseline - 1


def _change(value: float | None, baseline: float | None) -> str:
    extra = _extra(value, baseline)
    return "-" if extra is None else f"{extra:+.1%}"


def _ratio(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f} x" if value and base else "-"


def _num(value, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}{unit}"


if __name__ == "__main__":
    main()
