"""One `manage.py runpoller` process, measured from the outside.

The poller's own view comes from status(): its control endpoint
(GET /status on POLLER_CONTROL_BIND, sampled every few seconds) while it
runs, and the JSON line ({"event": "stopped", ...}) it prints when it exits. A
runpoller without the endpoint still works: the samples are then empty and
only the summary line and the log are used.
"""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field

from harness import ROOT, ProcessSample, django_env, free_port, machine_cpu_seconds

STARTUP_TIMEOUT_SECONDS = 300
STOP_TIMEOUT_SECONDS = 300
STATUS_EVERY_SECONDS = 5.0
STARTUP_POLL_SECONDS = 0.1
SCHEDULED_LOG = "Poller started with"


def read_status(bind: str, token: str) -> dict | None:
    """The poller's status() as JSON, or None while nothing answers."""
    request = urllib.request.Request(
        f"http://{bind}/status", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def parse_summary(stdout: str) -> dict:
    """The status runpoller prints as a JSON line when it stops; empty if
    there is none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                continue
            if summary.get("event") == "stopped":
                return summary
    return {}


@dataclass
class PollerReport:
    started_at: float  # Unix time of the process start
    stopped_at: float  # Unix time of SIGTERM
    scheduled_s: float | None  # process start -> every project scheduled
    summary: dict  # from the {"event": "stopped"} line
    samples: list[dict] = field(default_factory=list)  # status() while running
    cpu_percent: float = 0.0  # of one core, over the measured window
    machine_cpu_percent: float = 0.0
    peak_rss_mb: float = 0.0
    exit_code: int | None = None
    log_tail: list[str] = field(default_factory=list)

    def final_status(self) -> dict:
        """The last status sample, updated with the exit summary."""
        return {**(self.samples[-1] if self.samples else {}), **self.summary}

    def lag_ms(self) -> tuple[float | None, float | None, float | None]:
        """Median of the sampled p50s, worst sampled p99, and max."""
        p50s = sorted(s["lag_p50_ms"] for s in self.samples if s.get("lag_p50_ms"))
        p99s = [s["lag_p99_ms"] for s in self.samples if s.get("lag_p99_ms")]
        maxes = [s["lag_max_ms"] for s in self.samples if s.get("lag_max_ms")]
        if not p50s:
            return None, None, None
        return p50s[len(p50s) // 2], max(p99s, default=None), max(maxes, default=None)


class PollerRun:
    """Start runpoller, wait until it has scheduled `projects`, let it run
    `warmup` + `measure` seconds, stop it with SIGTERM, and report."""

    def __init__(self, database_url: str, *, projects: int, max_concurrent: int):
        self.projects = projects
        self.bind = f"127.0.0.1:{free_port()}"
        self.token = secrets.token_urlsafe(16)
        self.env = django_env(
            database_url,
            MIN_POLL_INTERVAL="1",
            MAX_CONCURRENT_HTTP=str(max_concurrent),
            POLLER_CONTROL_BIND=self.bind,
            POLLER_CONTROL_TOKEN=self.token,
        )
        self._log: list[str] = []
        self._scheduled_log_at: float | None = None

    def run(self, *, warmup: float, measure: float) -> PollerReport:
        started_wall, started = time.time(), time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runpoller"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stdout: list[str] = []
        _drain(process.stdout, stdout.append)
        _drain(process.stderr, self._on_log_line)
        try:
            report = self._measure(process, started_wall, started, warmup, measure)
        finally:
            if process.poll() is None:
                process.kill()
        report.exit_code = process.returncode
        report.summary = parse_summary("".join(stdout))
        report.log_tail = self._log[-20:]
        return report

    def _measure(self, process, started_wall, started, warmup, measure):
        sample = ProcessSample(process.pid)
        samples: list[dict] = []
        scheduled = self._wait_scheduled(process, samples)
        report = PollerReport(started_wall, 0.0, None, {}, samples)
        report.scheduled_s = None if scheduled is None else scheduled - started
        self._sample_until(process, sample, samples, time.monotonic() + warmup)
        cpu_before, machine_before = sample.cpu_seconds, machine_cpu_seconds()[0]
        window_start = time.monotonic()
        self._sample_until(process, sample, samples, window_start + measure)
        window = time.monotonic() - window_start
        report.cpu_percent = 100 * (sample.cpu_seconds - cpu_before) / window
        report.machine_cpu_percent = (
            100 * (machine_cpu_seconds()[0] - machine_before) / window
        )
        report.peak_rss_mb = sample.peak_rss_mb
        report.stopped_at = time.time()
        process.send_signal(signal.SIGTERM)
        process.wait(STOP_TIMEOUT_SECONDS)
        return report

    def _wait_scheduled(self, process, samples: list[dict]) -> float | None:
        """Poll the status (or watch the log) until every project is
        scheduled; returns that moment (monotonic)."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            status = read_status(self.bind, self.token)
            if status and status.get("active_projects", 0) >= self.projects:
                samples.append(status)
                return time.monotonic()
            if self._scheduled_log_at is not None and status is None:
                return self._scheduled_log_at
            time.sleep(STARTUP_POLL_SECONDS)
        raise RuntimeError(f"runpoller did not schedule: {self._log[-20:]}")

    def _sample_until(self, process, sample, samples, until: float) -> None:
        next_status = time.monotonic()
        while (now := time.monotonic()) < until:
            if process.poll() is not None:
                raise RuntimeError(f"runpoller exited early: {self._log[-20:]}")
            sample.read()
            if now >= next_status:
                status = read_status(self.bind, self.token)
                if status:
                    samples.append(status)
                next_status = now + STATUS_EVERY_SECONDS
            time.sleep(min(1.0, max(until - time.monotonic(), 0)))
        sample.read()

    def _on_log_line(self, line: str) -> None:
        if SCHEDULED_LOG in line and self._scheduled_log_at is None:
            self._scheduled_log_at = time.monotonic()
        self._log.append(line.rstrip())
        del self._log[:-200]


def _drain(stream, on_line) -> None:
    """Read a pipe in a thread so the child never blocks on a full pipe."""

    def read() -> None:
        for line in stream:
            on_line(line)

    threading.Thread(target=read, daemon=True).start()
