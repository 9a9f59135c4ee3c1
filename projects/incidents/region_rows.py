"""What the region step (regions.py) reads and writes, in the writer's
statements.

The read is one statement, right after the writer's lock
(states.lock_projects): each project's quorum, kind and interval, the
regions it is given, and the regions' unsettled views of it (a settled
view, the most common, is what no row means). It cannot be the locking
statement itself: on PostgreSQL a statement that waited for a lock reads
the other tables as they were when it began, so it would miss the views
that the writer it waited for committed. The writes go into the writer's
pipeline with the polls.

A region's settled view is written again only every REFRESH_SECONDS, not
at every poll (most polls): its row then says which regions poll the
project and bounds where its latest poll is (at or after the row's
last_polled_at), and the page and a takeover read that poll itself
. The row of a view that is not settled is written at
every poll.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import NamedTuple

from django.db import connection

from projects.batch_writes import datetime_adapter, quote, upsert_rows
from projects.incidents.machine import UP, Poll, Streak
from projects.incidents.states import _aware
from projects.models import Project, ProjectRegionState
from projects.units import SECONDS_PER_UNIT

MAX_REASON_LENGTH = 1000
# A settled view's row is written again once it is this old: every tenth
# poll at 60 s. Readers of a region's latest poll scan the polls since.
REFRESH_SECONDS = 600


class View(NamedTuple):
    """One region's view of one project, as its row stores it."""

    streak: Streak
    reason: str
    polled_at: datetime | None


class Facts(NamedTuple):
    """What the region step needs of one project besides its streak."""

    quorum: int | None
    heartbeat: bool
    interval_seconds: int
    regions: tuple[int, ...]  # those it is given; none: every live one
    views: dict[int, View]  # its unsettled views, by region
    # The writer's own region's row was written within REFRESH_SECONDS.
    recent: bool


_NO_VIEWS: dict[int, View] = MappingProxyType({})  # type: ignore[assignment]


def read_facts(
    cursor, project_ids: Sequence[int], region_id: int, at: datetime
) -> dict[int, Facts]:
    """Each project's Facts for a batch of `region_id`'s polls from `at`
    on, in one statement. Call it once lock_projects() holds the rows."""
    if not project_ids:
        return {}
    written_since = datetime_adapter()(at - timedelta(seconds=REFRESH_SECONDS))
    cursor.execute(*_select(sorted(project_ids), region_id, written_since))
    return {row[0]: _facts(*row[1:]) for row in cursor.fetchall()}


_SETTLED = (
    f"s.state = '{UP}' AND s.consecutive_failures = 0 "
    "AND s.consecutive_successes = 0 AND s.failing_since IS NULL"
)
_VIEW_COLUMNS = (
    "s.region_id, s.state, s.consecutive_failures, s.consecutive_successes, "
    "s.failing_since, s.last_error, s.last_polled_at"
)


def _select(project_ids: list[int], region_id, written_since) -> tuple:
    project = quote(Project._meta.db_table)
    given = quote(Project.regions.through._meta.db_table)
    views = quote(ProjectRegionState._meta.db_table)
    if connection.vendor == "postgresql":
        # The project's few views read once (LATERAL), for both the
        # unsettled ones and the own one's age; EXISTS as a column of its
        # own was planned as a hash of every view of the region, each batch.
        return (
            "SELECT p.id, p.quorum, p.kind, p.interval, p.interval_unit, "
            f"(SELECT array_agg(t.region_id) FROM {given} t "
            "WHERE t.project_id = p.id), v.views, coalesce(v.recent, false) "
            f"FROM {project} p LEFT JOIN LATERAL (SELECT "
            f"json_agg(json_build_array({_VIEW_COLUMNS})) "
            f"FILTER (WHERE NOT ({_SETTLED})) AS views, "
            "bool_or(s.region_id = %s AND s.last_polled_at >= %s) AS recent "
            f"FROM {views} s WHERE s.project_id = p.id) v ON true "
            "WHERE p.id = ANY(%s)",
            [region_id, written_since, project_ids],
        )
    marks = ", ".join(["%s"] * len(project_ids))
    return (
        "SELECT p.id, p.quorum, p.kind, p.interval, p.interval_unit, "
        f"(SELECT group_concat(t.region_id) FROM {given} t "
        "WHERE t.project_id = p.id), "
        f"(SELECT json_group_array(json_array({_VIEW_COLUMNS})) FROM {views} s "
        f"WHERE s.project_id = p.id AND NOT ({_SETTLED})), "
        f"EXISTS (SELECT 1 FROM {views} o WHERE o.project_id = p.id "
        "AND o.region_id = %s AND o.last_polled_at >= %s) "
        f"FROM {project} p WHERE p.id IN ({marks})",
        [region_id, written_since, *project_ids],
    )


def _facts(quorum, kind, interval, unit, regions, views, recent) -> Facts:
    if not regions and (not views or views == "[]"):
        return _plain_facts(quorum, kind, interval, unit, bool(recent))
    if isinstance(regions, str):  # SQLite's group_concat
        regions = [int(r) for r in regions.split(",")]
    if isinstance(views, str):  # SQLite's JSON text; PostgreSQL's is parsed
        views = json.loads(views)
    return Facts(
        quorum,
        kind == Project.Kind.HEARTBEAT,
        interval * SECONDS_PER_UNIT[unit],
        tuple(regions or ()),
        {row[0]: _view(*row[1:]) for row in views or ()},
        bool(recent),
    )


@functools.lru_cache(maxsize=1024)
def _plain_facts(quorum, kind, interval, unit, recent) -> Facts:
    """The Facts of a project given no regions and settled everywhere:
    most projects share a few, made once."""
    return Facts(
        quorum,
        kind == Project.Kind.HEARTBEAT,
        interval * SECONDS_PER_UNIT[unit],
        (),
        _NO_VIEWS,
        recent,
    )


def _view(state, failures, successes, since, reason, polled_at) -> View:
    return View(
        Streak(state, failures, successes, _aware(since)), reason, _aware(polled_at)
    )


REGION_FIELDS = (
    "project",
    "region",
    "state",
    "consecutive_failures",
    "consecutive_successes",
    "failing_since",
    "last_polled_at",
    "last_up",
    "last_status_code",
    "last_response_time_ms",
    "last_error",
)
_REPLACED = dict.fromkeys(REGION_FIELDS[2:], "{new}")


def save_views(
    cursor, region_id: int, mine: dict[int, tuple[Streak, str, list[Poll]]]
) -> None:
    """Store the region's view of each project given: its streak, the
    reason it last failed and its latest poll; one statement."""
    adapt = datetime_adapter()
    rows = []
    for project_id in sorted(mine):
        streak, reason, polls = mine[project_id]
        last = polls[-1]
        rows.append(
            (
                project_id,
                region_id,
                streak.state,
                streak.failures,
                streak.successes,
                adapt(streak.failing_since),
                adapt(last.at),
                last.up,
                last.status_code,
                last.response_time_ms,
                reason[:MAX_REASON_LENGTH],
            )
        )
    upsert_rows(
        cursor,
        ProjectRegionState,
        REGION_FIELDS,
        rows,
        conflict=("project", "region"),
        updates=_REPLACED,
    )
