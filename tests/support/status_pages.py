"""A status page with projects, rollups, an incident and updates, made
straight in the database for the status page tests and the browser test."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from projects.models import (
    DailyRollup,
    HourlyRollup,
    Incident,
    Project,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
)


@dataclass
class Built:
    page: StatusPage
    projects: list[Project]
    down: Project
    incident: Incident


def build_page(
    *,
    projects: int = 20,
    sections: int = 3,
    days: int = 90,
    now: datetime | None = None,
    slug: str = "acme",
    with_incident: bool = True,
) -> Built:
    now = now or datetime.now(UTC)
    page = StatusPage.objects.create(title="Acme status", slug=slug)
    made = Project.objects.bulk_create(
        Project(
            name=f"{slug} service {n:03d}",
            url=f"http://127.0.0.1:9/{n}",
            interval=60,
            interval_unit="seconds",
            state=Project.State.UP,
            last_status="up",
        )
        for n in range(projects)
    )
    groups = [
        StatusPageSection.objects.create(page=page, name=f"Section {s + 1}", position=s)
        for s in range(sections)
    ]
    for n, project in enumerate(made):
        groups[n % sections].projects.add(project)
    add_rollups(made, days=days, now=now)
    down = made[min(1, len(made) - 1)]
    if not with_incident:
        return Built(page, made, down, None)
    Project.objects.filter(pk=down.pk).update(
        state=Project.State.DOWN, last_status="down"
    )
    incident = Incident.objects.create(
        project=down,
        started_at=now - timedelta(minutes=42),
        confirmed_at=now - timedelta(minutes=40),
        first_error="connection refused",
    )
    StatusUpdate.objects.create(
        incident=incident,
        status="investigating",
        message="We are looking into **errors** on the API.",
        created_at=now - timedelta(minutes=30),
    )
    StatusUpdate.objects.create(
        incident=incident,
        status="identified",
        message="A full disk on the database server. Cleaning up.",
        created_at=now - timedelta(minutes=10),
    )
    return Built(page, made, down, incident)


def add_rollups(projects: list[Project], *, days: int, now: datetime) -> None:
    """Daily rollups for the days before today (1,440 polls a day, a few
    failures on some days) and one hourly rollup for today."""
    today = now.astimezone(UTC).date()
    DailyRollup.objects.bulk_create(
        DailyRollup(
            project=project,
            day=today - timedelta(days=back),
            polls=1440,
            failures=((back * 7 + n) % 23 == 0 and (back % 5) * 3) or 0,
        )
        for n, project in enumerate(projects)
        for back in range(1, days)
    )
    HourlyRollup.objects.bulk_create(
        HourlyRollup(
            project=project,
            hour=datetime.combine(today, datetime.min.time(), tzinfo=UTC),
            polls=60,
            failures=0,
            responses=60,
            response_time_sum_ms=60 * 120,
        )
        for project in projects
    )
