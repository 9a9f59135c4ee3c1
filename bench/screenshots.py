"""The README's screenshots, made again from demo data:

    .venv/bin/python bench/screenshots.py            # writes docs/images/*.png
    .venv/bin/python bench/screenshots.py --regions  # regions-*.png instead
    .venv/bin/python bench/screenshots.py --variants --out /tmp/shots
        # the first hour's pages (sign-in, dashboard, project, heartbeat,
        # incidents, poller, API key created, status page, subscribe), each
        # at 1280 and 390 px, light and dark, as JPEG: dashboard-390-dark.jpg ...

Builds a fresh SQLite database in a temporary folder (migrated, then a
week of polls of a few demo projects: one down now with its incident open,
one that had outages, one paused, one waiting for its first poll, one
certificate close to expiry), starts gunicorn on a free 127.0.0.1 port
against it, logs in with a throwaway admin user and photographs the
dashboard and a project page with Debian's headless chromium
(/usr/bin/chromium) through Playwright. Nothing outside 127.0.0.1 is
contacted and the repository's own database is not touched.

With --regions, the demo is three live regions (eu, us, ap) that polled
two projects every minute for an hour through the poller's own writer
(DatabaseResultStore), us failing alone for the last quarter hour (so the
project is pending, not down); photographed: the overview with its region
dots, and the project page's last hour with a line per region.

The demo data is made with the ORM before Playwright starts (its event
loop makes Django refuse ORM calls), rollups by rebuild_rollups(), as the
poller's writer would have kept them.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
USERNAME = "demo"
PASSWORD = "demo-screenshots-only"
DAYS = 7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=IMAGES, help="folder for PNGs")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--regions", action="store_true", help="the regions shots")
    parser.add_argument(
        "--variants",
        action="store_true",
        help="every shot at 1280 and 390 px, light and dark (for a review)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="WIDTH-SCHEME",
        help="with --variants, only these (390-dark ...); again for more",
    )
    args = parser.parse_args()
    shots = REGION_SHOTS if args.regions else SHOTS
    with tempfile.TemporaryDirectory(prefix="monitor-screens-") as folder:
        env = demo_environment(Path(folder))
        os.environ.update(env)
        run_manage(["migrate", "--noinput", "-v", "0"], env)
        run_manage(["collectstatic", "--noinput", "-v", "0"], env)
        ids = seed_regions() if args.regions else seed()
        port = free_port()
        with Gunicorn(port, env):
            wait_until_serving(port)
            base = f"http://127.0.0.1:{port}"
            if not args.variants:
                shoot(base, ids["project"], args.out, args.width, shots)
            variants = [
                (width, scheme)
                for width, scheme in VARIANTS
                if not args.only or f"{width}-{scheme}" in args.only
            ]
            for width, scheme in variants if args.variants else ():
                shoot_pages(base, first_hour_pages(ids), args.out, width, scheme)
    print(f"wrote {args.out}")


# (file, the project page's range); the overview's file has no range.
SHOTS = (("dashboard.png", None), ("project.png", "7d"))
REGION_SHOTS = (("regions-overview.png", None), ("regions-project.png", "1h"))
VARIANTS = ((1280, "light"), (1280, "dark"), (390, "light"), (390, "dark"))
# JPEG at this quality, and pages cut at this height (a long table's end
# says nothing more), keep a before-and-after set of 72 shots to a few MB;
# the text stays readable.
JPEG_QUALITY = 50
MAX_HEIGHT = 2400


def first_hour_pages(ids: dict) -> list[tuple[str, str]]:
    """The pages issue #42 names, in the order a newcomer meets them:
    (file stem, path). The sign-in page is shot before signing in; "api-key"
    is the admin's add form, submitted: the page that shows the new key."""
    return [
        ("login", "/accounts/login/"),
        ("dashboard", "/"),
        ("project", f"/projects/{ids['project']}/?range=7d"),
        ("heartbeat", f"/projects/{ids['heartbeat']}/"),
        ("incidents", "/incidents/"),
        ("poller", "/poller/"),
        ("api-key", ids["api_key_add"]),
        ("status-page", "/status/acme/"),
        ("subscribe", "/status/acme/subscribe/"),
    ]


def demo_environment(folder: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / 'demo.sqlite3'}",
        "SECRET_KEY": "demo-screenshots-only-" + "x" * 40,
        "DEBUG": "false",
        "HTTPS": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "ENV_FILE": str(folder / "no.env"),  # ignore the developer's .env
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "LOG_LEVEL": "WARNING",
    }


def run_manage(arguments: list[str], env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=env, check=True
    )


# Demo data -------------------------------------------------------------------


def seed() -> int:
    """Demo projects with a week of polls; returns the id of the project
    whose page is photographed."""
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.urls import reverse
    from django.utils import timezone

    from projects.models import ApiKey, Incident, NotificationChannel, PollerNode

    get_user_model().objects.create_superuser(USERNAME, password=PASSWORD)
    now = timezone.now().replace(second=0, microsecond=0)
    NotificationChannel.objects.create(
        name="on-call webhook",
        kind="webhook",
        url="https://hooks.example.com/uptime",
        secret="whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        is_default=True,
    )
    rng = random.Random(27)
    week = DAYS * 24 * 60
    checkout = add_project("checkout-api", "https://shop.example.com/api/health")
    history(checkout, now, rng, base_ms=85, outages=[])
    payments = add_project("payments", "https://payments.example.com/health")
    payment_outages = [(3000, 25), (week - 190, 14)]
    history(payments, now, rng, base_ms=140, outages=payment_outages)
    for start, length in payment_outages:
        resolved_incident(payments, now, start, length)
    search = add_project("search", "https://search.example.com/ready")
    history(search, now, rng, base_ms=210, outages=[(week - 7, 7)])
    Incident.objects.create(
        project=search,
        started_at=now - timedelta(minutes=6),
        confirmed_at=now - timedelta(minutes=4),
        first_error="expected 200-299, got 503",
        last_error="timed out after 10 s",
        failed_polls=7,
    )
    status_page = add_project("status-page", "https://status.example.com/")
    history(status_page, now, rng, base_ms=45, outages=[])
    Incident.objects.create(
        project=status_page,
        kind=Incident.Kind.CERTIFICATE,
        started_at=now - timedelta(hours=3),
        confirmed_at=now - timedelta(hours=3),
        first_error="certificate expires in 9 days",
        last_error="certificate expires in 9 days",
        certificate_expires_at=now + timedelta(days=9, hours=4),
    )
    database = add_project("orders-db", "tcp://db.example.com:5432")
    history(database, now, rng, base_ms=3, outages=[(6000, 4)])
    resolved_incident(database, now, 6000, 4)
    legacy = add_project("legacy-admin", "https://old.example.com/", enabled=False)
    history(legacy, now - timedelta(days=2), rng, base_ms=320, outages=[], days=3)
    add_project("new-service", "https://new.example.com/health")
    heartbeat = heartbeat_project(now)
    status_page_of([checkout, payments, search, database])
    api_key_add = reverse(f"admin:{ApiKey._meta.app_label}_apikey_add")
    # Seen last, so that on a slow machine the poller is not yet "silent"
    # when the pages are shot.
    PollerNode.objects.create(
        name="demo-poller",
        host="127.0.0.1",
        pid=os.getpid(),
        started_at=now - timedelta(days=DAYS),
        last_seen_at=timezone.now(),
    )
    connections.close_all()
    return {
        "project": payments.pk,
        "heartbeat": heartbeat.pk,
        "api_key_add": api_key_add,
    }


def heartbeat_project(now):
    """A backup job's heartbeat: a ping an hour for the last day."""
    from projects.housekeeping.rollups import rebuild_rollups
    from projects.models import PollResult, Project, Status

    project = Project.objects.create(
        name="nightly-backup",
        kind="heartbeat",
        url="",
        interval=1,
        interval_unit="hours",
    )
    pings = [
        PollResult(
            project=project,
            polled_at=now - timedelta(hours=hours, minutes=3),
            status=Status.UP,
            error_message=f"backup done: {40 + hours} GB",
        )
        for hours in range(1, 24)
    ]
    PollResult.objects.bulk_create(pings)
    project.last_polled_at = pings[0].polled_at
    project.last_status = project.state = Status.UP
    project.save()
    rebuild_rollups(project_ids=[project.pk])
    return project


def status_page_of(projects) -> None:
    from projects.models import StatusPage, StatusPageSection

    page = StatusPage.objects.create(title="Acme status", slug="acme")
    section = StatusPageSection.objects.create(page=page, name="Shop and payments")
    section.projects.set(projects)


def seed_regions() -> int:
    """Three regions' polls of two projects for the last hour, saved by
    the poller's writer; returns the id of the project photographed."""
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.utils import timezone

    from polling.engine.types import Outcome
    from polling.store import DatabaseResultStore
    from projects.models import NotificationChannel, PollerNode, Region

    get_user_model().objects.create_superuser(USERNAME, password=PASSWORD)
    NotificationChannel.objects.create(
        name="on-call webhook",
        kind="webhook",
        url="https://hooks.example.com/uptime",
        is_default=True,
    )
    now = timezone.now().replace(second=0, microsecond=0)
    rng = random.Random(31)
    checkout = add_project("checkout-api", "https://shop.example.com/api/health")
    search = add_project("search", "https://search.example.com/ready")
    # (region, its label, seconds into each window, base ms per project)
    regions = [
        ("eu", "Frankfurt", 0, {checkout.pk: 38, search.pk: 120}),
        ("us", "Virginia", 3, {checkout.pk: 112, search.pk: 190}),
        ("ap", "Singapore", 6, {checkout.pk: 240, search.pk: 310}),
    ]
    # Every region live before the first poll is saved, as when their
    # pollers run side by side.
    made = {
        name: Region.objects.create(name=name, label=label, last_seen_at=now)
        for name, label, _, _ in regions
    }
    for name, _, offset, base in regions:
        region = made[name]
        PollerNode.objects.create(
            name=f"poller-{name}",
            host="127.0.0.1",
            pid=os.getpid(),
            started_at=now - timedelta(hours=1),
            last_seen_at=timezone.now(),
            region=region,
        )
        store = DatabaseResultStore(region_id=region.pk)
        for minute in range(60, 0, -1):
            at = now - timedelta(minutes=minute, seconds=-offset)
            batch = []
            for project_id, ms in base.items():
                failing = name == "us" and project_id == checkout.pk and minute <= 15
                batch.append(
                    Outcome(
                        project_id=project_id,
                        up=not failing,
                        started_at=at,
                        due_at=at,
                        status_code=503 if failing else 200,
                        response_time_ms=int(ms * rng.uniform(0.85, 1.2)),
                        error="expected 200-299, got 503" if failing else "",
                        connect_ms=ms // 4,
                        first_byte_ms=ms // 2,
                    )
                )
            store.save(batch)
    connections.close_all()
    return {"project": checkout.pk}


def resolved_incident(project, end, start: int, length: int) -> None:
    """The incident of an outage that history() wrote: `start` minutes
    after the week began, `length` failed polls, confirmed at the third."""
    from projects.models import Incident

    began = end - timedelta(minutes=DAYS * 24 * 60 - 1 - start)
    Incident.objects.create(
        project=project,
        started_at=began,
        confirmed_at=began + timedelta(minutes=2),
        resolved_at=began + timedelta(minutes=length),
        first_error="timed out after 10 s",
        last_error="expected 200-299, got 503",
        failed_polls=length,
    )


def add_project(name: str, url: str, **fields):
    from projects.models import Project

    project = Project(
        name=name, url=url, interval=60, interval_unit="seconds", **fields
    )
    project.full_clean()
    project.save()
    return project


def history(project, end, rng, *, base_ms, outages, days=DAYS) -> None:
    """One poll a minute for `days` up to `end`; `outages` are (minute from
    the start, length in minutes) runs of failed polls. Response times
    follow the hour of the day, with noise and a few slow spikes."""
    from projects.housekeeping.rollups import rebuild_rollups
    from projects.models import PollResult, Status

    minutes = days * 24 * 60
    down = set()
    for start, length in outages:
        down.update(range(start, start + length))
    polls = []
    for minute in range(minutes):
        polled_at = end - timedelta(minutes=minutes - 1 - minute)
        if minute in down:
            polls.append(
                PollResult(
                    project=project,
                    polled_at=polled_at,
                    status=Status.DOWN,
                    status_code=503 if minute % 3 else None,
                    response_time_ms=None if minute % 3 == 0 else base_ms * 4,
                    error_message=(
                        "expected 200-299, got 503"
                        if minute % 3
                        else "timed out after 10 s"
                    ),
                )
            )
            continue
        daily = 1 + 0.35 * math.sin(2 * math.pi * (polled_at.hour + 6) / 24)
        spike = 6 if rng.random() < 0.004 else 1
        ms = max(1, int(base_ms * daily * spike * rng.uniform(0.8, 1.25)))
        polls.append(
            PollResult(
                project=project,
                polled_at=polled_at,
                status=Status.UP,
                status_code=None if project.url.startswith("tcp://") else 200,
                response_time_ms=ms,
            )
        )
    PollResult.objects.bulk_create(polls, batch_size=2000)
    latest = polls[-1]
    project.last_polled_at = latest.polled_at
    project.last_status = latest.status
    project.last_status_code = latest.status_code
    project.last_response_time_ms = latest.response_time_ms
    project.state = latest.status
    project.consecutive_failures = 0 if latest.status == Status.UP else 7
    project.save()
    rebuild_rollups(project_ids=[project.pk])


# The server and the browser --------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    """gunicorn serving the demo database, for a `with` block."""

    def __init__(self, port: int, env: dict[str, str]) -> None:
        self.command = [
            sys.executable,
            "-m",
            "gunicorn",
            "monitor.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
        ]
        self.env = env

    def __enter__(self) -> subprocess.Popen:
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env)
        return self.process

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def wait_until_serving(port: int, seconds: float = 180) -> None:
    # Generous: the first page loads every URL, slow on a busy machine.
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/", timeout=30)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def shoot(
    base: str, project_id: int, out: Path, width: int, shots, scheme: str = "light"
) -> None:
    from tests.support.browser import chromium_context

    out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as profile,
        chromium_context(
            profile,
            viewport={"width": width, "height": 800},
            device_scale_factor=1,
            color_scheme=scheme,
        ) as context,
    ):
        page = context.new_page()
        page.goto(f"{base}/admin/login/?next=/")
        page.fill("#id_login", USERNAME)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/")
        (overview, _), (project, range_) = shots
        page.screenshot(path=out / overview, full_page=True)
        page.goto(f"{base}/projects/{project_id}/?range={range_}")
        # The top of the page: uptime, the chart, incidents and outages.
        page.set_viewport_size({"width": width, "height": 1180})
        page.screenshot(path=out / project)


def shoot_pages(base: str, pages, out: Path, width: int, scheme: str) -> None:
    """Each page, from the top down to MAX_HEIGHT, as <stem>-<width>-<scheme>.jpg."""
    from tests.support.browser import chromium_context

    out.mkdir(parents=True, exist_ok=True)
    height = 844 if width < 600 else 800
    with (
        tempfile.TemporaryDirectory() as profile,
        chromium_context(
            profile,
            viewport={"width": width, "height": height},
            device_scale_factor=1,
            color_scheme=scheme,
        ) as context,
    ):
        page = context.new_page()
        # A busy machine takes a while over a page with a week of polls.
        page.set_default_timeout(120_000)
        for stem, path in pages:
            page.goto(base + path)
            if stem == "api-key":
                page.fill("#id_name", "deploys from CI")
                with page.expect_navigation():
                    page.click("input[name=_save]")
            tall = page.evaluate("document.documentElement.scrollHeight")
            page.screenshot(
                path=out / f"{stem}-{width}-{scheme}.jpg",
                full_page=True,
                clip={"x": 0, "y": 0, "width": width, "height": min(tall, MAX_HEIGHT)},
                type="jpeg",
                quality=JPEG_QUALITY,
            )
            if stem == "login":
                page.fill("#id_login", USERNAME)
                page.fill("#id_password", PASSWORD)
                with page.expect_navigation():
                    page.press("#id_password", "Enter")


if __name__ == "__main__":
    main()
