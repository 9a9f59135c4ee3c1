"""Benchmark: how soon an alert arrives, and how a storm arrives.

    .venv/bin/python bench/bench_time_to_alert.py [--runs 5] [--storm 200]

Real processes with the default alert settings: `manage.py runpoller` and
`manage.py qcluster` on a fresh database (SQLite, or PostgreSQL when
DATABASE_URL names a server), a target on 127.0.0.1 that is switched to
503 and back, and a real webhook receiver.

Lone events: one project polled every 5 s, failure threshold 3. Each run
switches the target to 503, waits for incident.opened, switches it back,
waits for incident.resolved, then stays quiet for ALERT_DIGEST_SECONDS
and a little more, so the next run's events are lone again. "Stored" is
when this script first sees the incident (opened) or its resolved_at
(resolved) in the database, looking every 10 ms: the transaction that
stored the confirming poll has committed by then, so the figure is at most
~15 ms short. "Received" is when the receiver reads the request.

Storm: --storm projects on a second target switched to 503 together
(with as many healthy projects again, plus ten, so the monitor does not
take itself for cut off and hold every message), two channels; the
messages each channel gets until nothing is pending, then the same for the
recoveries.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime

from harness import (
    ROOT,
    django_env,
    drop_database,
    fresh_database_url,
    machine,
    manage,
    markdown_table,
    percentile_ms,
    setup_django,
)

WATCH_SECONDS = 0.01
QUIET_MARGIN_SECONDS = 5


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--storm", type=int, default=200, help="projects; 0: none")
    parser.add_argument("--interval", type=int, default=5, help="seconds")
    parser.add_argument("--threshold", type=int, default=3, help="failed polls")
    return parser.parse_args()


class Processes:
    """runpoller and qcluster on one queue of their own."""

    def __init__(self, database_url: str) -> None:
        self.env = django_env(
            database_url,
            Q_NAME=f"bench-alert-{uuid.uuid4().hex[:8]}",
            REDIS_URL="",
            POLLER_CONTROL_BIND="127.0.0.1:0",
        )
        self.started: list[subprocess.Popen] = []

    def __enter__(self) -> Processes:
        for command in ("qcluster", "runpoller"):
            self.started.append(
                subprocess.Popen(
                    [sys.executable, "manage.py", command],
                    cwd=ROOT,
                    env=self.env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        return self

    def __exit__(self, *exc_info) -> None:
        for process in self.started:
            os.killpg(process.pid, signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def timed_receiver():
    """A WebhookReceiver that notes when each request arrived."""
    from tests.support.webhook_receiver import WebhookReceiver

    class TimedReceiver(WebhookReceiver):
        def __init__(self) -> None:
            super().__init__()
            self.arrivals: list[tuple[float, object]] = []

        def record(self, received) -> None:
            with self._lock:
                self.arrivals.append((time.time(), received))
            super().record(received)

        def arrival(self, path: str, event: str, incident_id: int) -> float | None:
            for at, received in list(self.arrivals):
                body = received.json()
                if received.path != path or body.get("event") != event:
                    continue
                if (body.get("incident") or {}).get("id") == incident_id:
                    return at
            return None

    return TimedReceiver()


def make_projects(name, target, count, args, channels, *, path="/switch") -> list:
    from projects.models import Project

    projects = Project.objects.bulk_create(
        Project(
            name=f"{name} {number}",
            url=target.url(f"{path}?p={number}"),
            interval=args.interval,
            interval_unit="seconds",
            timeout_seconds=2,
            failure_threshold=args.threshold,
        )
        for number in range(count)
    )
    through = Project.channels.through
    through.objects.bulk_create(
        through(project_id=project.pk, notificationchannel_id=channel.pk)
        for project in projects
        for channel in channels
    )
    return projects


def make_channel(receiver, path: str):
    from projects.models import NotificationChannel

    return NotificationChannel.objects.create(
        name=path, kind="webhook", url=receiver.url(path)
    )


def until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(WATCH_SECONDS)
    raise RuntimeError(f"no {what} within {timeout} s")


def one_run(target, receiver, project, timeout: float) -> dict[str, float]:
    """Seconds from stored to received for the opened and resolved event,
    and from the switch to received."""
    from projects.models import Incident

    result = {}
    for event, status in (("incident.opened", 503), ("incident.resolved", 200)):
        switched = time.time()
        target.switch_status = status
        incidents = Incident.objects.filter(project=project)
        if status == 503:
            found = incidents.filter(resolved_at=None)
        else:
            found = incidents.exclude(resolved_at=None).filter(pk=result["incident"])
        incident_id = until(
            lambda found=found: found.values_list("pk", flat=True).first(),
            timeout,
            "stored " + event,
        )
        stored = time.time()
        received = until(
            lambda e=event, i=incident_id: receiver.arrival("/lone", e, i),
            timeout,
            event,
        )
        result["incident"] = incident_id
        result[event] = received - stored
        result[event + " from switch"] = received - switched
    return result


def storm(storm_target, receiver, count: int, timeout: float) -> dict[str, object]:
    """Messages per channel for a storm of openings, then of recoveries."""
    from projects.models import Incident, Notification

    counts = {}
    pending = Notification.objects.filter(state__in=["pending", "held"])
    for event, status in (("incident.opened", 503), ("incident.resolved", 200)):
        before = len(receiver.requests)
        storm_target.switch_status = status
        if status == 503:
            until(
                lambda: Incident.objects.filter(resolved_at=None).count() >= count,
                timeout,
                "storm incidents",
            )
        else:
            until(
                lambda: not Incident.objects.filter(resolved_at=None).exists(),
                timeout,
                "storm recoveries",
            )
        until(lambda: not pending.exists(), timeout, "deliveries")
        time.sleep(2)  # anything still on its way
        for path in ("/storm-a", "/storm-b"):
            sent = [r for r in receiver.requests[before:] if r.path == path]
            counts[(path, event)] = [_label(r.json()) for r in sent]
    return counts


def _label(body: dict) -> str:
    if body["event"] == "digest":
        return f"digest of {body['digest']['count']}"
    return body["event"]


def summary(runs: list[dict]) -> list[dict]:
    rows = []
    for key in (
        "incident.opened",
        "incident.resolved",
        "incident.opened from switch",
        "incident.resolved from switch",
    ):
        values = sorted(run[key] for run in runs)
        rows.append(
            {
                "event": key if "switch" in key else f"{key}, stored → received",
                "runs": len(values),
                "p50": f"{percentile_ms(values, 0.5):.0f} ms",
                "p95": f"{percentile_ms(values, 0.95):.0f} ms",
                "max": f"{max(values) * 1000:.0f} ms",
            }
        )
    return rows


def main() -> None:
    args = parse_args()
    database = fresh_database_url(f"monitor_bench_time_to_alert_{os.getpid()}")
    manage(database, "migrate", "--noinput")
    setup_django(database)
    from django.conf import settings

    from tests.support.target_server import TargetServer

    quiet = settings.ALERT_DIGEST_SECONDS + QUIET_MARGIN_SECONDS
    timeout = settings.ALERT_DIGEST_SECONDS + args.interval * (args.threshold + 4)
    runs = []
    counts = {}
    with (
        TargetServer() as target,
        TargetServer() as storm_target,
        timed_receiver() as receiver,
    ):
        lone = [make_channel(receiver, "/lone")]
        [project] = make_projects("lone", target, 1, args, lone)
        if args.storm:
            channels = [make_channel(receiver, p) for p in ("/storm-a", "/storm-b")]
            make_projects("storm", storm_target, args.storm, args, channels)
            healthy = args.storm + 10
            make_projects("healthy", storm_target, healthy, args, [], path="/ok")
        with Processes(database):
            time.sleep(args.interval * 2)  # every project polled up at least once
            for number in range(args.runs):
                runs.append(one_run(target, receiver, project, timeout))
                print(f"run {number + 1}: {runs[-1]}", flush=True)
                time.sleep(quiet)
            if args.storm:
                counts = storm(storm_target, receiver, args.storm, timeout * 4)
    drop_database(database)

    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}")
    print(
        f"one project every {args.interval} s, failure threshold {args.threshold}, "
        f"ALERT_DIGEST_SECONDS {settings.ALERT_DIGEST_SECONDS}, "
        f"database {'PostgreSQL' if database.startswith('postgres') else 'SQLite'}\n"
    )
    print(markdown_table(summary(runs)))
    for (path, event), messages in counts.items():
        print(
            f"\nstorm of {args.storm}, {event}, channel {path}: "
            f"{len(messages)} messages: {', '.join(messages)}"
        )


if __name__ == "__main__":
    main()
