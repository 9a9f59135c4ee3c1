"""Everything a status page shows, loaded in a fixed number of queries
whatever the number of projects on it (tests/status_pages/test_page.py counts
them for 5 and 50)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q, QuerySet, Sum

from projects.checks.units import SECONDS_PER_UNIT
from projects.models import (
    HourlyRollup,
    Incident,
    Project,
    ServiceLevelObjective,
    StatusPage,
    StatusPageSection,
)
from projects.objectives.status import objective_status
from projects.status_pages import days as day_cells
from projects.status_pages.incidents import IncidentView, page_incidents
from projects.status_pages.maintenance import MaintenanceView, page_maintenance
from projects.status_pages.rows import row_html
from projects.status_pages.states import (
    PAGE_STATES,
    PROJECT_STATES,
    Look,
    page_state,
    project_state,
)

PROJECT_FIELDS = (
    "id",
    "name",
    "enabled",
    "state",
    "interval",
    "interval_unit",
    "degraded_since",
)


@dataclass(slots=True)
class ProjectRow:
    name: str
    state: str
    html: str  # escaped by row_html


@dataclass(frozen=True, slots=True)
class ObjectiveLine:
    """An objective as a public page shows it: its target and how it
    stands, nothing about its alerts or channels."""

    name: str
    target_percent: float
    window: str
    attainment_percent: float | None
    budget_left_percent: float

    @property
    def target_text(self) -> str:
        """99.9, 99.95, 99: as many decimals as it has."""
        return f"{self.target_percent:g}"

    @property
    def met(self) -> bool:
        return (
            self.attainment_percent is None
            or self.attainment_percent >= self.target_percent
        )


@dataclass(slots=True)
class SectionView:
    name: str
    rows: list[ProjectRow] = field(default_factory=list)
    objectives: list[ObjectiveLine] = field(default_factory=list)


@dataclass(slots=True)
class PageContent:
    state: str
    look: Look
    sections: list[SectionView]
    open_incidents: list[IncidentView]
    past_incidents: list[IncidentView]
    maintenance: list[MaintenanceView]
    first_day: str
    built_at: datetime


def load(page: StatusPage, now: datetime) -> PageContent:
    sections = list(page.sections.all())
    members = section_members(sections)
    ids = page_projects(sections)
    projects = {
        row["id"]: row
        for row in Project.objects.filter(id__in=ids).values(*PROJECT_FIELDS)
    }
    intervals = {
        pk: row["interval"] * SECONDS_PER_UNIT[row["interval_unit"]]
        for pk, row in projects.items()
    }
    bars = day_cells.bars_by_project(
        intervals, page.show_uptime_days, now, project_ids=ids
    )
    maintenance, covered = page_maintenance(ids, now)
    incidents = page_incidents(page, projects, now, project_ids=ids)
    manual = {i.project_id for i in incidents.open if i.manual}
    responses = response_times(ids, now) if page.show_response_times else {}

    first_day = day_cells.day_range(page.show_uptime_days, now)[0].isoformat()

    def row(pk: int) -> ProjectRow:
        project = projects[pk]
        state = project_state(
            enabled=project["enabled"],
            state=project["state"],
            in_maintenance=covered is None or pk in covered,
            manual_incident=pk in manual,
            slow=project["degraded_since"] is not None,
        )
        percent = bars[pk].uptime.percent
        html = row_html(
            name=project["name"],
            state=state,
            look=PROJECT_STATES[state],
            uptime="" if percent is None else day_cells.percent_text(percent),
            bar=bars[pk].html,
            first_day=first_day,
            response_ms=responses.get(pk),
        )
        return ProjectRow(project["name"], state, html)

    objectives = (
        section_objectives(page, sections, members, now) if page.show_objectives else {}
    )
    views = [
        SectionView(
            section.name,
            sorted(
                (row(pk) for pk in members[section.pk] if pk in projects),
                key=lambda r: r.name.lower(),
            ),
            objectives.get(section.pk, []),
        )
        for section in sections
    ]
    overall = page_state([r.state for view in views for r in view.rows])
    return PageContent(
        state=overall,
        look=PAGE_STATES[overall],
        sections=views,
        open_incidents=incidents.open,
        past_incidents=incidents.past,
        maintenance=maintenance,
        first_day=first_day,
        built_at=now,
    )


def section_objectives(
    page: StatusPage,
    sections: list[StatusPageSection],
    members: dict[int, set[int]],
    now: datetime,
) -> dict[int, list[ObjectiveLine]]:
    """{section id: its objectives' lines}: the page's team's objectives on
    the section itself or on one of its projects, for a page whose owner
    turned show_objectives on. A few queries per objective (its window's
    rollups), so a page shows as many as its owner put on it."""
    on_page = {pk for pks in members.values() for pk in pks}
    found = ServiceLevelObjective.objects.filter(team_id=page.team_id).filter(
        Q(section__in=[s.pk for s in sections]) | Q(project_id__in=on_page)
    )
    lines: dict[int, list[ObjectiveLine]] = defaultdict(list)
    for objective in found.select_related("section").order_by("name"):
        status = objective_status(objective, now)
        line = ObjectiveLine(
            name=objective.name,
            target_percent=objective.target_percent,
            window="this month"
            if objective.calendar_month
            else f"{objective.window_days} days",
            attainment_percent=status.attainment_percent,
            budget_left_percent=max(status.error_budget_remaining_percent, 0),
        )
        for section in sections:
            if objective.section_id == section.pk or (
                objective.project_id in members[section.pk]
            ):
                lines[section.pk].append(line)
    return lines


def section_members(sections: list[StatusPageSection]) -> dict[int, set[int]]:
    """{section id: its project ids}, chosen or by tag: two queries."""
    members: dict[int, set[int]] = defaultdict(set)
    chosen = StatusPageSection.projects.through.objects.filter(
        statuspagesection_id__in=[s.pk for s in sections]
    )
    for section_id, project_id in chosen.values_list(
        "statuspagesection_id", "project_id"
    ):
        members[section_id].add(project_id)
    tags = {s.tag_id for s in sections if s.tag_id}
    if tags:
        tagged: dict[int, set[int]] = defaultdict(set)
        links = Project.tags.through.objects.filter(tag_id__in=tags)
        for tag_id, project_id in links.values_list("tag_id", "project_id"):
            tagged[tag_id].add(project_id)
        for section in sections:
            if section.tag_id:
                members[section.pk] |= tagged[section.tag_id]
    return members


def page_projects(sections: list[StatusPageSection]) -> QuerySet:
    """The ids of the projects section_members() finds, as a subquery for
    the page's other queries: as a list, 500 ids cost each query about 3
    ms of this process's time (Django and psycopg handle each parameter),
    more than the database spends on it."""
    chosen = StatusPageSection.projects.through.objects.filter(
        statuspagesection_id__in=[s.pk for s in sections]
    ).values("project_id")
    on_page = Q(id__in=chosen)
    tags = {s.tag_id for s in sections if s.tag_id}
    if tags:
        tagged = Project.tags.through.objects.filter(tag_id__in=tags)
        on_page |= Q(id__in=tagged.values("project_id"))
    return Project.objects.filter(on_page).values("id")


def response_times(ids: Iterable[int] | QuerySet, now: datetime) -> dict[int, int]:
    """{project id: its average response time over 24 hours, in ms}."""
    rows = (
        HourlyRollup.objects.filter(
            Q(hour__gte=now - timedelta(hours=24)), project_id__in=ids
        )
        .values("project_id")
        .annotate(total=Sum("response_time_sum_ms"), count=Sum("responses"))
        .order_by()
    )
    return {
        row["project_id"]: round(row["total"] / row["count"])
        for row in rows
        if row["count"]
    }


def overall_state(page: StatusPage, now: datetime) -> str:
    """The page's state alone, for its badge: no uptime, no timeline."""
    members = section_members(list(page.sections.all()))
    ids = sorted({pk for pks in members.values() for pk in pks})
    projects = Project.objects.filter(id__in=ids).values(
        "id", "enabled", "state", "degraded_since"
    )
    _, covered = page_maintenance(ids, now)
    manual = set(
        Incident.objects.filter(
            project_id__in=ids, kind=Incident.Kind.MANUAL, resolved_at__isnull=True
        ).values_list("project_id", flat=True)
    )
    return page_state(
        [
            project_state(
                enabled=p["enabled"],
                state=p["state"],
                in_maintenance=covered is None or p["id"] in covered,
                manual_incident=p["id"] in manual,
                slow=p["degraded_since"] is not None,
            )
            for p in projects
        ]
    )
