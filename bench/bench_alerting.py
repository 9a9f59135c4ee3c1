"""Benchmark: does alerting slow polling down, and is every event delivered
exactly once?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/bench_alerting.py --projects 30000

The same projects run twice, each on a fresh copy of one prepared
PostgreSQL database: a share of them (--flapping, 10 %) flap, up for half
of every --flap-period seconds and 503 for the other half, each at its own
phase, so incidents open and resolve all the time. The first run has no
channels and no tasks process; the second has two webhook channels on a
local receiver that answers after --receiver-delay seconds, and a real
`manage.py qcluster` delivering. Both measure runpoller the same way
(bench/poller_run.py). After the second run the tasks process is given
time to deliver everything queued, then the receiver's count of each
(channel, event, incident), digests unpacked, is checked against the
outbox: none missing, none twice.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime

from harness import (
    ROOT,
    TargetProcess,
    django_env,
    drop_database,
    fresh_database_url,
    machine,
    manage,
    markdown_table,
    raise_open_files_limit,
    setup_django,
)
from poller_run import PollerRun

SUFFIX = os.environ.get("BENCH_DB_SUFFIX", "alerts")
QUEUE = f"bench-alerting-{SUFFIX}"
DRAIN_TIMEOUT_SECONDS = 180
GROUPED = ("incident.opened", "incident.resolved")
SENT = ("delivered", "digested")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=30000)
    parser.add_argument("--interval", type=int, default=60, help="seconds")
    parser.add_argument("--flapping", type=float, default=0.10, help="share")
    parser.add_argument("--flap-period", type=int, default=180, help="seconds")
    parser.add_argument("--receiver-delay", type=float, default=2.0, help="seconds")
    parser.add_argument("--warmup", type=float, default=60, help="seconds")
    parser.add_argument("--measure", type=float, default=180, help="seconds")
    parser.add_argument("--max-concurrent", type=int, default=100)
    return parser.parse_args()


def create_projects(target: TargetProcess, args: argparse.Namespace) -> None:
    from projects.models import Project

    flapping = int(args.projects * args.flapping)
    every = max(args.projects // max(flapping, 1), 1)

    def url(i: int) -> str:
        if i % every == 0 and i // every < flapping:
            offset = (i // every) * args.flap_period // flapping
            return target.url(f"/flap/{args.flap_period}/{offset}?p={i}")
        return target.url(f"/ok?p={i}")

    Project.objects.bulk_create(
        (
            Project(
                name=f"bench {i}",
                url=url(i),
                interval=args.interval,
                interval_unit="seconds",
                timeout_seconds=10,
            )
            for i in range(args.projects)
        ),
        batch_size=5000,
    )


def close_database() -> None:
    """A database is copied only while nobody is connected to it."""
    from django.db import connection

    connection.close()


def use_database(url: str) -> None:
    """Point this process's ORM at another database of the same server."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = url.rpartition("/")[2]


def add_channels(receiver) -> dict[int, str]:
    """Two webhook channels on the receiver, routing every project;
    returns {channel id: receiver path}."""
    from projects.models import NotificationChannel, Project

    paths = {}
    for name in ("first", "second"):
        channel = NotificationChannel.objects.create(
            name=name, kind="webhook", url=receiver.url(f"/{name}")
        )
        paths[channel.pk] = f"/{name}"
    through = Project.channels.through
    project_ids = list(Project.objects.values_list("pk", flat=True))
    through.objects.bulk_create(
        (
            through(project_id=project_id, notificationchannel_id=channel_id)
            for project_id in project_ids
            for channel_id in paths
        ),
        batch_size=10000,
    )
    return paths


def start_qcluster(url: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=django_env(url, Q_NAME=QUEUE, REDIS_URL=""),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def run_poller(url: str, args: argparse.Namespace):
    run = PollerRun(url, projects=args.projects, max_concurrent=args.max_concurrent)
    # The poller asks the tasks process for deliveries through this queue.
    run.env.update(Q_NAME=QUEUE, REDIS_URL="")
    report = run.run(warmup=args.warmup, measure=args.measure)
    if report.exit_code != 0 or not report.summary:
        raise RuntimeError(f"runpoller failed ({report.exit_code}): {report.log_tail}")
    return report


def wait_for_deliveries() -> float:
    """Seconds until nothing is left to send (or the timeout)."""
    from projects.models import Notification

    started = time.monotonic()
    while time.monotonic() - started < DRAIN_TIMEOUT_SECONDS:
        if not Notification.objects.filter(state="pending").exists():
            break
        time.sleep(1)
    return time.monotonic() - started


def measured(report, args: argparse.Namespace) -> dict:
    from projects.models import Incident, PollResult

    end = datetime.fromtimestamp(report.stopped_at, UTC)
    start = datetime.fromtimestamp(report.stopped_at - args.measure, UTC)
    polls = PollResult.objects.filter(polled_at__gte=start, polled_at__lt=end)
    p50, p99, _ = report.lag_ms()
    return {
        "polls/s": polls.count() / args.measure,
        "lag p50": p50 or 0.0,
        "lag p99": p99 or 0.0,
        "skipped": report.summary.get("skipped_ticks", 0),
        "opened": Incident.objects.filter(
            confirmed_at__gte=start, confirmed_at__lt=end
        ).count(),
        "poller CPU": report.cpu_percent,
    }


def received_events(receiver) -> tuple[Counter, int, int]:
    """(Counter of (path, event, incident id) as received, digests unpacked;
    requests; repeated webhook-ids)."""
    events: Counter = Counter()
    ids = Counter(request.headers.get("webhook-id") for request in receiver.requests)
    for request in receiver.requests:
        body = request.json()
        items = body["digest"]["events"] if body["event"] == "digest" else [body]
        for item in items:
            events[(request.path, item["event"], item["incident"]["id"])] += 1
    repeated = sum(count - 1 for count in ids.values())
    return events, len(receiver.requests), repeated


def queued_events(paths: dict[int, str]) -> tuple[set, Counter]:
    """The outbox's (path, event, incident id) of every opened/resolved
    row sent (alone or in a digest), and all such rows counted by state."""
    from projects.models import Notification

    rows = Notification.objects.filter(event__in=GROUPED)
    states = Counter(rows.values_list("state", flat=True))
    sent = rows.filter(state__in=SENT).values_list("channel_id", "event", "incident_id")
    keys = {(paths[channel], event, incident) for channel, event, incident in sent}
    return keys, states


def delivery_check(receiver, paths: dict[int, str]) -> dict:
    events, requests, repeated = received_events(receiver)
    queued, states = queued_events(paths)
    return {
        "requests": requests,
        "events sent": len(queued),
        "events received": sum(events.values()),
        "received twice": sum(count - 1 for count in events.values() if count > 1),
        "missing": len(queued - events.keys()),
        "not queued": len(events.keys() - queued),
        "repeated webhook-id": repeated,
        "states": dict(states),
    }


def run_once(template: str, alerting: bool, receiver, args) -> dict:
    close_database()
    url = fresh_database_url(
        f"monitor_bench_alerting_{'on' if alerting else 'off'}_{SUFFIX}",
        template=template,
    )
    use_database(url)
    paths = add_channels(receiver) if alerting else {}
    tasks = start_qcluster(url) if alerting else None
    try:
        report = run_poller(url, args)
        result = measured(report, args)
        if tasks is not None:
            result["drain s"] = wait_for_deliveries()
            result["delivery"] = delivery_check(receiver, paths)
    finally:
        if tasks is not None:
            os.killpg(tasks.pid, signal.SIGTERM)
            tasks.wait(60)
        close_database()
        drop_database(url)
    return result


def table(args, runs: dict[str, dict]) -> str:
    base = runs["without alerting"]["polls/s"]
    rows = []
    for label, result in runs.items():
        delivery = result.get("delivery", {})
        rows.append(
            {
                "run": label,
                "polls/s": f"{result['polls/s']:.1f}",
                "vs without": f"{100 * (result['polls/s'] / base - 1):+.1f} %",
                "lag p50": f"{result['lag p50']:.0f} ms",
                "lag p99": f"{result['lag p99']:.0f} ms",
                "skipped ticks": result["skipped"],
                "incidents opened": result["opened"],
                "poller CPU": f"{result['poller CPU']:.0f} %",
                "webhook requests": delivery.get("requests", "-"),
                "events sent": delivery.get("events sent", "-"),
                "events received": delivery.get("events received", "-"),
                "twice": delivery.get("received twice", "-"),
                "missing": delivery.get("missing", "-"),
            }
        )
    return markdown_table(rows)


def main() -> None:
    args = parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("Set DATABASE_URL to a PostgreSQL server.")
    raise_open_files_limit()
    template = fresh_database_url(f"monitor_bench_alerting_{SUFFIX}")
    manage(template, "migrate", "--noinput")
    setup_django(template)
    from tests.support.webhook_receiver import WebhookReceiver

    runs = {}
    with TargetProcess() as target:
        create_projects(target, args)
        with WebhookReceiver(delay=args.receiver_delay) as receiver:
            runs["without alerting"] = run_once(template, False, receiver, args)
            runs["with alerting"] = run_once(template, True, receiver, args)
    drop_database(template)
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}")
    print(
        f"{args.projects} projects every {args.interval} s, "
        f"{args.flapping:.0%} flapping (period {args.flap_period} s), "
        f"receiver answers after {args.receiver_delay} s, "
        f"warmup {args.warmup:.0f} s, measured {args.measure:.0f} s\n"
    )
    print(table(args, runs))
    with_alerting = runs["with alerting"]
    print(f"\ndelivery: {with_alerting['delivery']}")
    print(f"drained {with_alerting['drain s']:.0f} s after the poller stopped")


if __name__ == "__main__":
    main()
