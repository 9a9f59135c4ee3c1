"""One `manage.py runpoller` process, measured from the outside.

The poller's own view comes from status(): its control endpoint
(GET /status on POLLER_CONTROL_BIND, sampled every few seconds) while it
runs, and the JSON line ({"event": "stopped", ...}) it prints when it exits. A
runpoller without the endpoint still works: the samples are then empty and
only the summary line and the log are used.

With `processes` > 1 it runs `runpoller --processes N`: the children serve
their endpoints on consecutive ports, and every status is theirs added up
(counters summed, lag the worst of them). CPU and memory are the whole
process tree's.
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from harness import ROOT, ProcessSample, django_env, free_port, machine_cpu_seconds

STARTUP_TIMEOUT_SECONDS = 300
STOP_TIMEOUT_SECONDS = 300
STATUS_EVERY_SECONDS = 5.0
# The span of the engine's lag percentiles (polling/engine/stats.py).
LAG_MINUTE_SECONDS = 60.0
STARTUP_POLL_SECONDS = 0.1
SCHEDULED_LOG = "Poller started with"
ICMP_LINE = "ICMP checks"  # runpoller's sentence on how it pings
# Status fields taken from the worst poller rather than added up.
WORST_OF = ("lag_p50_ms", "lag_p99_ms", "lag_max_ms", "uptime_seconds")
# Status counters reported for the measured window (their increase).
WINDOW_COUNTS = (
    "polls_total",
    "results_written",
    "lease_statements",
    "skipped_ticks",
)


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
    summaries = parse_summaries(stdout)
    return summaries[-1] if summaries else {}


def parse_summaries(stdout: str) -> list[dict]:
    """Every poller's stopped line (one per child of --processes N)."""
    summaries = []
    for line in stdout.splitlines():
        # A log line (monitor/log_format.py): the JSON follows "polling: ".
        line = line.partition(" polling: ")[2] or line
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                continue
            if summary.get("event") == "stopped":
                summaries.append(summary)
    return summaries


def merge_statuses(statuses: list[dict]) -> dict | None:
    """Several pollers' statuses as one: numbers added up, lag and uptime
    the worst of them; each poller's own under "pollers"."""
    if not statuses:
        return None
    if len(statuses) == 1:
        return {**statuses[0], "pollers": statuses}
    merged: dict = {"pollers": statuses}
    for name, value in statuses[0].items():
        values = [s.get(name) for s in statuses]
        if name in WORST_OF:
            merged[name] = max((v for v in values if v is not None), default=None)
        elif all(isinstance(v, int | float) for v in values):
            merged[name] = sum(values)
        else:
            merged[name] = value
    return merged


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
    window_s: float = 0.0  # the measured window
    # Increase of WINDOW_COUNTS over the window (None: no status then).
    window_counts: dict[str, int | None] = field(default_factory=dict)
    # Each meter's increase over the window, per second.
    meter_rates: dict[str, float] = field(default_factory=dict)
    statuses_at_end: list[dict] = field(default_factory=list)  # per poller
    # Samples taken in the measured window start here (the engine's lag
    # percentiles cover the last minute, so those of the window's first
    # minute still reach back before it).
    window_first_sample: int = 0

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

    def steady_lag_p99_ms(self) -> float | None:
        """The worst sampled p99 whose minute lies wholly in the measured
        window: the start's spread and the warm-up left out."""
        skip = int(LAG_MINUTE_SECONDS / STATUS_EVERY_SECONDS)
        steady = self.samples[self.window_first_sample + skip :]
        p99s = [s["lag_p99_ms"] for s in steady if s.get("lag_p99_ms")]
        return max(p99s, default=None)


class PollerRun:
    """Start runpoller, wait until it has scheduled `projects`, let it run
    `warmup` + `measure` seconds, stop it with SIGTERM, and report.

    `command` replaces `manage.py runpoller` (it must take runpoller's
    options); `meters` are read at the start and the end of the measured
    window, each a callable returning a running total (CPU seconds of
    another process, requests served), and reported per second; `env` adds
    to (or overrides) the poller's environment (POLLER_REGION, say)."""

    def __init__(
        self,
        database_url: str,
        *,
        projects: int,
        max_concurrent: int,
        processes: int = 1,
        command: list[str] | None = None,
        meters: dict[str, Callable[[], float]] | None = None,
        env: dict[str, str] | None = None,
    ):
        self.projects = projects
        self.binds = [f"127.0.0.1:{port}" for port in _free_ports(processes)]
        self.bind = self.binds[0]
        self.token = secrets.token_urlsafe(16)
        self.env = django_env(
            database_url,
            MIN_POLL_INTERVAL="1",
            MAX_CONCURRENT_HTTP=str(max_concurrent),
            POLLER_CONTROL_BIND=self.bind,
            POLLER_CONTROL_TOKEN=self.token,
            **(env or {}),
        )
        self.command = command or [sys.executable, "manage.py", "runpoller"]
        if processes != 1:
            self.command = [*self.command, "--processes", str(processes)]
        self.meters = meters or {}
        self._log: list[str] = []
        self._scheduled_log_at: float | None = None
        self.icmp_mode = ""  # what runpoller said at start about pinging

    def statuses(self) -> list[dict]:
        """Each poller's status, of those that answer."""
        return [s for s in (read_status(b, self.token) for b in self.binds) if s]

    def status(self) -> dict | None:
        return merge_statuses(self.statuses())

    def run(self, *, warmup: float, measure: float) -> PollerReport:
        started_wall, started = time.time(), time.monotonic()
        process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.pid = process.pid  # for meters that read its children
        stdout: list[str] = []
        _drain(process.stdout, self._on_output_line(stdout))
        _drain(process.stderr, self._on_log_line)
        try:
            report = self._measure(process, started_wall, started, warmup, measure)
        finally:
            if process.poll() is None:
                process.kill()
        report.exit_code = process.returncode
        report.summary = merge_statuses(parse_summaries("".join(stdout))) or {}
        report.log_tail = self._log[-20:]
        return report

    def _measure(self, process, started_wall, started, warmup, measure):
        sample = ProcessSample(process.pid, descendants=True)
        samples: list[dict] = []
        scheduled = self._wait_scheduled(process, samples)
        report = PollerReport(started_wall, 0.0, None, {}, samples)
        report.scheduled_s = None if scheduled is None else scheduled - started
        self._sample_until(process, sample, samples, time.monotonic() + warmup)
        cpu_before, machine_before = sample.cpu_seconds, machine_cpu_seconds()[0]
        counts_before, meters_before = self.status(), self._read_meters()
        window_start = time.monotonic()
        report.window_first_sample = len(samples)
        self._sample_until(process, sample, samples, window_start + measure)
        window = time.monotonic() - window_start
        statuses_after, meters_after = self.statuses(), self._read_meters()
        report.cpu_percent = 100 * (sample.cpu_seconds - cpu_before) / window
        report.machine_cpu_percent = (
            100 * (machine_cpu_seconds()[0] - machine_before) / window
        )
        report.peak_rss_mb = sample.peak_rss_mb
        report.window_s = window
        report.statuses_at_end = statuses_after
        report.window_counts = _increase(
            counts_before, merge_statuses(statuses_after), WINDOW_COUNTS
        )
        report.meter_rates = {
            name: (meters_after[name] - meters_before[name]) / window
            for name in self.meters
        }
        report.stopped_at = time.time()
        process.send_signal(signal.SIGTERM)
        process.wait(STOP_TIMEOUT_SECONDS)
        return report

    def _wait_scheduled(self, process, samples: list[dict]) -> float | None:
        """Poll the status (or watch the log) until every project is
        scheduled; returns that moment (monotonic)."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            status = self.status()
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
                status = self.status()
                if status:
                    samples.append(status)
                next_status = now + STATUS_EVERY_SECONDS
            time.sleep(min(1.0, max(until - time.monotonic(), 0)))
        sample.read()

    def _on_output_line(self, stdout: list[str]) -> Callable[[str], None]:
        def keep(line: str) -> None:
            stdout.append(line)
            if ICMP_LINE in line and not self.icmp_mode:
                self.icmp_mode = line.strip()

        return keep

    def _on_log_line(self, line: str) -> None:
        if SCHEDULED_LOG in line and self._scheduled_log_at is None:
            self._scheduled_log_at = time.monotonic()
        self._log.append(line.rstrip())
        del self._log[:-200]

    def _read_meters(self) -> dict[str, float]:
        return {name: meter() for name, meter in self.meters.items()}


def _increase(before: dict | None, after: dict | None, names) -> dict:
    if not (before and after):
        return dict.fromkeys(names)
    return {name: after.get(name, 0) - before.get(name, 0) for name in names}


def _free_ports(count: int) -> list[int]:
    """`count` consecutive free ports: runpoller --processes N serves its
    children's endpoints on the port it is given and the ones after it."""
    for _ in range(100):
        first = free_port()
        ports = list(range(first, first + count))
        if all(_port_free(port) for port in ports[1:]):
            return ports
    raise RuntimeError(f"found no {count} consecutive free ports")


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _drain(stream, on_line) -> None:
    """Read a pipe in a thread so the child never blocks on a full pipe."""

    def read() -> None:
        for line in stream:
            on_line(line)

    threading.Thread(target=read, daemon=True).start()
