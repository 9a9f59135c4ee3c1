"""The capacity benchmark's runs: one function per kind of scenario, each
returning its numbers. bench/capacity.py calls them in turn."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import time

from harness import (
    ROOT,
    ProcessSample,
    TargetProcess,
    django_env,
    machine_cpu_seconds,
    process_cpu_seconds,
    process_tree,
    threads_cpu_seconds,
)
from internet import InternetTarget
from kinds import KindTargets
from nginx import NginxTarget
from poller_run import PollerRun
from report import Result
from scenarios import HANG_EVERY, SLOW_DELAY_MS, Scenario

BENCH = ROOT / "bench"


@dataclasses.dataclass
class Targets:
    fast: NginxTarget
    slow: TargetProcess
    internet: InternetTarget | None = None  # started only when a scenario needs it
    kinds: KindTargets | None = None  # likewise, for the "kinds" scenarios

    def requests(self) -> int:
        return self.fast.requests() + self.slow.requests()

    def project_urls(self, scenario: Scenario) -> list[str]:
        """capacity_db.py prepare's URL arguments for the scenario."""
        if scenario.target == "internet":
            return ["--urls-file", str(internet_urls(scenario, self))]
        if scenario.target == "kinds":
            return ["--urls-file", str(self.kinds.urls_file(scenario.mix))]
        if scenario.target == "slow":
            return ["--url", self.slow.url(f"/delay/{SLOW_DELAY_MS}")]
        urls = ["--url", self.fast.url("/ok")]
        if scenario.target == "mixed":
            urls += ["--hang-url", self.slow.url("/hang")]
            urls += ["--hang-every", str(HANG_EVERY)]
        return urls


def run_engine(scenario, label, url, targets: Targets) -> Result:
    prepare(url, scenario, targets)
    concurrency = scenario.max_concurrent()
    before = targets.requests()
    run = PollerRun(url, projects=scenario.projects, max_concurrent=concurrency)
    report = run.run(warmup=scenario.warmup, measure=scenario.measure)
    got = targets.requests() - before
    back = readback(url, report.started_at, report.stopped_at)
    final = report.final_status()
    if report.exit_code != 0 or not report.summary:
        print("\n".join(report.log_tail), file=sys.stderr)
    return Result(
        scenario,
        label,
        concurrency,
        polls_per_s=back["polls_per_s"],
        missed_status=final.get("skipped_ticks"),
        missed_db=back["missed"],
        lag_status=report.lag_ms(),
        lag_db=(None, None, None) if scenario.saturation else _lag(back),
        polls=final.get("polls_total"),
        rows=back["rows"],
        target_got=got,
        cpu_percent=report.cpu_percent,
        machine_cpu_percent=report.machine_cpu_percent,
        peak_rss_mb=report.peak_rss_mb,
        scheduled_s=report.scheduled_s,
        first_polls_done_s=back["first_polls_done_s"],
        extra={**back, "exit_code": report.exit_code, "status": final},
    )


def _lag(back: dict) -> tuple:
    return back["lag_p50_ms"], back["lag_p99_ms"], back["lag_max_ms"]


def run_naive(scenario, label, url, targets: Targets) -> Result:
    prepare(url, scenario, targets)
    before = targets.requests()
    seconds = scenario.warmup + scenario.measure
    command = ["naive", "--database-url", url, "--seconds", str(seconds)]
    out, sample = measured_reference(command, warmup=scenario.warmup)
    got = targets.requests() - before
    back = readback(url, out["started_at"], out["stopped_at"])
    return Result(
        scenario,
        label,
        f"{out['threads']:,} threads",
        polls_per_s=back["polls_per_s"],
        missed_db=back["missed"],
        lag_status=(out["lag_p50_ms"], out["lag_p99_ms"], out["lag_max_ms"]),
        polls=out["polls"],
        rows=back["rows"],
        target_got=got,
        first_polls_done_s=back["first_polls_done_s"],
        extra={**back, **out},
        **sample,
    )


def run_bare(scenario, label, targets: Targets) -> Result:
    before = targets.fast.requests()
    threads = scenario.concurrency
    nginx = targets.fast
    url = nginx.tls_url("/ok") if scenario.tls else nginx.url("/ok")
    command = ["bare", "--client", scenario.client, "--url", url]
    command += ["--ca-bundle", nginx.ca_bundle, "--threads", str(threads)]
    out, sample = measured_reference([*command, "--seconds", str(scenario.measure)])
    return Result(
        scenario,
        label,
        threads,
        polls_per_s=out["requests"] / out["seconds"],
        polls=out["requests"],
        target_got=nginx.requests() - before,
        extra=out,
        **sample,
    )


def run_writer(scenario, label, url, targets: Targets) -> dict:
    prepare(url, scenario, targets)
    ceiling = db_step(url, "writer-ceiling", "--seconds", str(scenario.measure))
    return {"database": label, **ceiling}


# Helpers


def prepare(url: str, scenario: Scenario, targets: Targets) -> None:
    db_step(
        url,
        "prepare",
        "--projects",
        str(scenario.projects),
        "--interval",
        str(scenario.interval),
        "--timeout",
        str(scenario.timeout),
        *targets.project_urls(scenario),
    )


def readback(url: str, started: float, stopped: float) -> dict:
    return db_step(
        url, "readback", "--started", str(started), "--stopped", str(stopped)
    )


# Check kinds side by side and alone (issues #41 and #43)


def run_kinds(scenario, label, url, targets: Targets) -> Result:
    """runpoller over projects of several check kinds (bench/kinds.py).
    CPU is the poller process's own: its writer (a child process) and the
    targets (nginx, dnsmasq, service_targets.py, Redis, PostgreSQL) are
    measured apart."""
    prepare(url, scenario, targets)
    concurrency = scenario.max_concurrent()
    before = targets.fast.requests()
    run = PollerRun(url, projects=scenario.projects, max_concurrent=concurrency)
    run.meters = {
        "writer_cpu": lambda: children_cpu_seconds(run.pid),
        "target_cpu": targets.kinds.cpu_seconds,
        **{
            f"{part}_cpu": functools.partial(part_cpu_seconds, run, prefix)
            for part, prefix in POLLER_PARTS.items()
        },
    }
    report = run.run(warmup=scenario.warmup, measure=scenario.measure)
    http_got = targets.fast.requests() - before
    back = readback(url, report.started_at, report.stopped_at)
    final = report.final_status()
    if report.exit_code != 0 or not report.summary:
        print("\n".join(report.log_tail), file=sys.stderr)
    writer_percent = 100 * report.meter_rates.get("writer_cpu", 0)
    return Result(
        scenario,
        label,
        concurrency,
        polls_per_s=back["polls_per_s"],
        missed_status=final.get("skipped_ticks"),
        missed_db=back["missed"],
        lag_status=report.lag_ms(),
        lag_db=_lag(back),
        polls=final.get("polls_total"),
        rows=back["rows"],
        target_got=http_got if dict(scenario.mix).get("http") else None,
        cpu_percent=report.cpu_percent,
        machine_cpu_percent=report.machine_cpu_percent,
        peak_rss_mb=report.peak_rss_mb,
        scheduled_s=report.scheduled_s,
        first_polls_done_s=back["first_polls_done_s"],
        extra={
            **back,
            "exit_code": report.exit_code,
            "status": final,
            "icmp_mode": run.icmp_mode,
            "writer_cpu_percent": writer_percent,
            "poller_cpu_percent": report.cpu_percent - writer_percent,
            "target_cpu_percent": 100 * report.meter_rates.get("target_cpu", 0),
            "parts_cpu_percent": {
                part: 100 * report.meter_rates[f"{part}_cpu"] for part in POLLER_PARTS
            },
        },
    )


# Where the poller process's own CPU goes: its threads, by the names they
# give the system (polling/engine/threads.py); the rest is every other
# thread's (reloader, control, leases) and the interpreter's.
POLLER_PARTS = {"workers": "worker-", "scheduler": "scheduler"}


def part_cpu_seconds(run: PollerRun, name_prefix: str) -> float:
    return threads_cpu_seconds(run.pid, name_prefix)


def db_step(url: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(BENCH / "capacity_db.py"), *args],
        env=django_env(url),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"capacity_db.py {args[0]} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def measured_reference(
    command: list[str], *, warmup: float = 0, script: str | None = "references.py"
) -> tuple[dict, dict]:
    """Run bench/references.py (or, with `script` None, the whole command
    given); returns its JSON and its CPU %, machine CPU % (both after
    `warmup`) and peak RSS."""
    if script is not None:
        command = [sys.executable, str(BENCH / script), *command]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
    )
    sample, started = ProcessSample(process.pid), time.monotonic()
    marks = None
    while process.poll() is None:
        try:
            sample.read()
        except FileNotFoundError:
            break
        if marks is None and time.monotonic() - started >= warmup:
            marks = (time.monotonic(), sample.cpu_seconds, machine_cpu_seconds()[0])
        time.sleep(0.5)
    out, _ = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"references.py {command[0]} failed ({process.returncode})")
    window = time.monotonic() - marks[0] if marks else 0
    return json.loads(out.splitlines()[-1]), {
        "cpu_percent": 100 * (sample.cpu_seconds - marks[1]) / window
        if window
        else None,
        "machine_cpu_percent": (
            100 * (machine_cpu_seconds()[0] - marks[2]) / window if window else None
        ),
        "peak_rss_mb": sample.peak_rss_mb,
    }


# The internet-like scenario (issue #32)


def run_internet(scenario, label, url, targets: Targets) -> Result:
    """runpoller against bench/internet.py's targets, trusting its
    authority; the writer's CPU (runpoller's child) and the target's are
    measured apart."""
    internet = targets.internet
    prepare(url, scenario, targets)
    os.environ["BENCH_CA_BUNDLE"] = internet.ca_bundle
    concurrency = scenario.max_concurrent()
    run = PollerRun(
        url,
        projects=scenario.projects,
        max_concurrent=concurrency,
        command=[sys.executable, str(BENCH / "trusting_poller.py")],
    )
    run.meters = {
        "writer_cpu": lambda: children_cpu_seconds(run.pid),
        "target_cpu": internet.cpu_seconds,
    }
    report = run.run(warmup=scenario.warmup, measure=scenario.measure)
    back = readback(url, report.started_at, report.stopped_at)
    final = report.final_status()
    if report.exit_code != 0 or not report.summary:
        print("\n".join(report.log_tail), file=sys.stderr)
    writer_percent = 100 * report.meter_rates.get("writer_cpu", 0)
    return Result(
        scenario,
        label,
        concurrency,
        polls_per_s=back["polls_per_s"],
        missed_status=final.get("skipped_ticks"),
        missed_db=back["missed"],
        lag_status=report.lag_ms(),
        lag_db=_lag(back),
        polls=final.get("polls_total"),
        rows=back["rows"],
        cpu_percent=report.cpu_percent,
        machine_cpu_percent=report.machine_cpu_percent,
        peak_rss_mb=report.peak_rss_mb,
        scheduled_s=report.scheduled_s,
        first_polls_done_s=back["first_polls_done_s"],
        extra={
            **back,
            "exit_code": report.exit_code,
            "status": final,
            "writer_cpu_percent": writer_percent,
            "poller_cpu_percent": report.cpu_percent - writer_percent,
            "target_cpu_percent": 100 * report.meter_rates.get("target_cpu", 0),
        },
    )


def run_internet_loop(scenario, label, targets: Targets) -> Result:
    """bench/internet_loops.py (httpx or pycurl) on the same projects."""
    internet = targets.internet
    urls = internet_urls(scenario, targets)
    seconds = scenario.warmup + scenario.measure
    command = [sys.executable, str(BENCH / "internet_loops.py")]
    command += ["--client", scenario.client, "--urls-file", str(urls)]
    command += ["--interval", str(scenario.interval)]
    command += ["--threads", str(scenario.concurrency)]
    command += ["--seconds", str(seconds), "--warmup", str(scenario.warmup)]
    command += ["--ca-bundle", internet.ca_bundle]
    target_before = internet.cpu_seconds()
    out, sample = measured_process(command, warmup=scenario.warmup)
    target_percent = 100 * (internet.cpu_seconds() - target_before) / seconds
    return Result(
        scenario,
        label,
        f"{scenario.concurrency} threads",
        polls_per_s=out["polls_per_s"],
        missed_status=out["missed"],
        lag_status=(out["lag_p50_ms"], out["lag_p99_ms"], out["lag_max_ms"]),
        polls=out["polls"],
        extra={
            **out,
            "poller_cpu_percent": sample["cpu_percent"],
            "writer_cpu_percent": None,
            # Over the whole run, warm-up included: the loops' own window
            # is read from their output only.
            "target_cpu_percent": target_percent,
        },
        **sample,
    )


def internet_urls(scenario, targets: Targets):
    from internet import write_urls

    return write_urls(scenario.projects, targets.internet, targets.internet.folder)


def children_cpu_seconds(pid: int) -> float:
    """CPU of a process's descendants (runpoller's writer process)."""
    total = 0.0
    for child in process_tree(pid)[1:]:
        try:
            total += process_cpu_seconds(child)
        except FileNotFoundError:
            continue
    return total


def measured_process(command: list[str], *, warmup: float = 0) -> tuple[dict, dict]:
    """measured_reference() for any script printing one JSON line."""
    return measured_reference(command, warmup=warmup, script=None)
