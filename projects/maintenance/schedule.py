"""Which projects are under maintenance, and when.

A MaintenanceSchedule is read once for a stretch of time (a writer's
batch, a dashboard page) and then answered from memory: windows are few,
so it costs at most two small queries.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from functools import reduce
from operator import or_

from django.db import connection
from django.db.models import Q

from projects.models import MaintenanceWindow, Project

Span = tuple[datetime, datetime]


class MaintenanceSchedule:
    def __init__(
        self,
        spans: dict[int, list[Span]],
        *,
        everywhere: set[int],
        members: dict[int, set[int]],
    ) -> None:
        self._spans = spans  # window id -> its spans
        self._everywhere = everywhere  # windows for all projects
        self._members = members  # window id -> project ids

    @classmethod
    def load(cls, start: datetime, end: datetime) -> MaintenanceSchedule:
        """The enabled windows with a span overlapping [start, end]."""
        if not _any_candidates(start, end):
            return cls({}, everywhere=set(), members={})
        candidates = MaintenanceWindow.objects.filter(enabled=True).filter(
            Q(repeat=MaintenanceWindow.Repeat.WEEKLY)
            | Q(starts_at__lte=end, ends_at__gt=start)
        )
        until = end + timedelta(microseconds=1)
        spans, team_wide = {}, {}
        for window in candidates:
            found = list(window.occurrences(start, until))
            if found:
                spans[window.pk] = found
                if window.all_projects:
                    team_wide[window.pk] = window.team_id
        everywhere = _install_wide(team_wide)
        chosen = [pk for pk in spans if pk not in everywhere]
        members = _members(chosen)
        members.update(_team_members(team_wide, exclude=everywhere))
        return cls(spans, everywhere=everywhere, members=members)

    @property
    def empty(self) -> bool:
        return not self._spans

    def covers(self, project_id: int, at: datetime) -> bool:
        return any(
            start <= at < end
            for window, spans in self._spans.items()
            if window in self._everywhere or project_id in self._members[window]
            for start, end in spans
        )

    def covered_projects(self, at: datetime) -> set[int] | None:
        """The projects under maintenance at `at`; None means all."""
        covered = set()
        for window, spans in self._spans.items():
            if any(start <= at < end for start, end in spans):
                if window in self._everywhere:
                    return None
                covered |= self._members[window]
        return covered

    def spans_for(self, project_id: int) -> list[Span]:
        """Every span that covers this project, merged where they overlap."""
        spans = sorted(
            span
            for window, found in self._spans.items()
            if window in self._everywhere or project_id in self._members[window]
            for span in found
        )
        merged: list[Span] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def poll_filter(self, *, at: str = "polled_at") -> Q | None:
        """Matches the rows (polls, by their time field `at`) made while a
        window covered their project; None when no window covers any."""
        parts = []
        for window, spans in self._spans.items():
            during = reduce(
                or_, (Q(**{f"{at}__gte": s, f"{at}__lt": e}) for s, e in spans)
            )
            if window in self._everywhere:
                parts.append(during)
            elif self._members[window]:
                parts.append(during & Q(project_id__in=self._members[window]))
        return reduce(or_, parts) if parts else None


def _any_candidates(start: datetime, end: datetime) -> bool:
    """Whether load() could find a window, asked in plain SQL: the writer
    loads a schedule for every batch, there is seldom a window to find,
    and building the ORM's query cost thirty times more than this one."""
    table = connection.ops.quote_name(MaintenanceWindow._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {table} WHERE enabled AND (repeat = %s "
            "OR (starts_at <= %s AND ends_at > %s)) LIMIT 1",
            [MaintenanceWindow.Repeat.WEEKLY.value, adapt(end), adapt(start)],
        )
        return cursor.fetchone() is not None


def _install_wide(team_wide: dict[int, int]) -> set[int]:
    """The "all projects" windows whose team owns every project: they cover
    everything, and need no list of ids (the case of a one-team install)."""
    teams = set(team_wide.values())
    if len(teams) != 1 or Project.objects.exclude(team_id__in=teams).exists():
        return set()
    return set(team_wide)


def _team_members(team_wide: dict[int, int], *, exclude: set[int]) -> dict:
    """{window id: its team's project ids} for the other "all projects"
    windows: all of its own team's projects, never another team's."""
    wanted = {pk: team for pk, team in team_wide.items() if pk not in exclude}
    if not wanted:
        return {}
    by_team = defaultdict(set)
    rows = Project.objects.filter(team_id__in=set(wanted.values()))
    for team, project in rows.values_list("team_id", "pk"):
        by_team[team].add(project)
    return {pk: by_team[team] for pk, team in wanted.items()}


def _members(window_ids: list[int]) -> dict[int, set[int]]:
    members = defaultdict(set)
    if window_ids:
        links = MaintenanceWindow.projects.through.objects.filter(
            maintenancewindow_id__in=window_ids
        )
        for window, project in links.values_list("maintenancewindow_id", "project_id"):
            members[window].add(project)
    return members
