"""What the region step (regions.py) reads and writes, in the writer's
statements.

The reads are two statements: the writer's lock (states.lock_projects'
statement, which also brings each project's quorum, kind and interval and
its own region's view's age), then the regions' unsettled views (a
settled view, the most common, is what no row means; a partial index
holds only the others) and the regions each project is given. The views
cannot come with the lock: on PostgreSQL a statement that waited for a
lock reads the other tables as they were when it began, so it would miss
the views that the writer it waited for committed. The writes go into the
writer's pipeline with the polls.

A region's settled view is written again only every REFRESH_SECONDS, not
at every poll (most polls): its row then says which regions poll the
project and bounds where its latest poll is (at or after the row's
last_polled_at), and the page and a takeover read that poll itself. The
row of a view that is not settled is written at every poll.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import NamedTuple

from django.db import connection

from projects.checks.units import SECONDS_PER_UNIT
from projects.incidents.batch_writes import datetime_adapter, quote, upsert_rows
from projects.incidents.machine import UP, Poll, Streak
from projects.incidents.states import Stored, aware, streak_and_thresholds
from projects.models import Project, ProjectRegionState

MAX_REASON_LENGTH = 1000
# A settled view's row is written again once it is older than this: every
# 31st poll at 60 s (at every tenth, the rewrites were a fifth of the
# region step's cost on SQLite). Readers of a region's latest poll look
# among the polls since; a takeover's finds it at once, walking back.
REFRESH_SECONDS = 1800


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
    # The writer's own region's view was written within REFRESH_SECONDS.
    recent: bool
    regions: tuple[int, ...] = ()  # those it is given; none: every live one
    views: dict[int, View] = MappingProxyType({})  # unsettled, by region


def lock_with_facts(
    cursor, project_ids: Sequence[int], region_id: int, at: datetime
) -> tuple[dict[int, Stored], dict[int, Facts]]:
    """lock_projects()' answer, and each project's Facts for a batch of
    `region_id`'s polls from `at` on: the rows are locked until the
    transaction ends. Two statements: the lock (which also brings the
    project's settings and its own region's view's age), then the views
    that are not settled, and the regions each project is given."""
    project_ids = sorted(set(project_ids))
    if not project_ids:
        return {}, {}
    written_since = datetime_adapter()(at - timedelta(seconds=REFRESH_SECONDS))
    cursor.execute(*_locking_select(project_ids, region_id, written_since))
    stored, facts = {}, {}
    for row in cursor.fetchall():
        stored[row[0]] = streak_and_thresholds(row[:7])
        facts[row[0]] = _plain_facts(*row[7:])
    if facts:
        cursor.execute(*_unsettled_select(sorted(facts)))
        _add_views(facts, cursor.fetchall())
    return stored, facts


# Settled, in the order of the partial index projectregionstate_unsettled,
# so that the planner sees the query's condition is the index's.
_SETTLED = (
    "consecutive_failures = 0 AND consecutive_successes = 0 "
    f"AND failing_since IS NULL AND state = '{UP}'"
)


def _locking_select(project_ids: list[int], region_id, written_since) -> tuple:
    """lock_projects()' statement and columns, then the project's quorum,
    kind and interval, and whether its own region's view was written
    since `written_since`. The own view is only written by this region's
    writers, so a lock waited for another region's leaves it as it was."""
    project = quote(Project._meta.db_table)
    views = quote(ProjectRegionState._meta.db_table)
    select = (
        "SELECT p.id, p.state, p.consecutive_failures, p.consecutive_successes, "
        "p.failing_since, p.failure_threshold, p.recovery_threshold, "
        "p.quorum, p.kind, p.interval, p.interval_unit, "
        f"(SELECT o.last_polled_at >= %s FROM {views} o "
        "WHERE o.project_id = p.id AND o.region_id = %s) "
    )
    params = [written_since, region_id]
    if connection.vendor == "postgresql":
        # NO KEY UPDATE and OF p, as lock_projects() explains.
        return (
            select + f"FROM {project} p WHERE p.id = ANY(%s) "
            "ORDER BY p.id FOR NO KEY UPDATE OF p",
            [*params, project_ids],
        )
    # SQLite: the ids as one JSON parameter, taken apart by json_each: half
    # the CPU of a parameter per id, a statement Django rewrites (%s to ?)
    # in every batch.
    return (
        select + f"FROM json_each(%s) AS b JOIN {project} p ON p.id = b.value",
        [*params, json.dumps(project_ids)],
    )


def _unsettled_select(project_ids: list[int]) -> tuple:
    """The views that are not settled, and the regions each project is
    given, as (project, region, view columns or nulls): in a statement
    after the lock, which reads what the writer it waited for committed.
    Most batches get no row."""
    views = quote(ProjectRegionState._meta.db_table)
    given = quote(Project.regions.through._meta.db_table)
    columns = (
        "state, consecutive_failures, consecutive_successes, failing_since, "
        "last_error, last_polled_at"
    )
    if connection.vendor == "postgresql":
        return (
            f"SELECT project_id, region_id, {columns} FROM {views} "
            f"WHERE project_id = ANY(%s) AND NOT ({_SETTLED}) "
            "UNION ALL SELECT project_id, region_id, NULL, NULL, NULL, NULL, "
            f"NULL, NULL FROM {given} WHERE project_id = ANY(%s)",
            [project_ids, project_ids],
        )
    # SQLite: the ids as one JSON parameter, as in _locking_select().
    return (
        "WITH b AS (SELECT value FROM json_each(%s)) "
        f"SELECT project_id, region_id, {columns} FROM b JOIN {views} "
        f"ON project_id = b.value AND NOT ({_SETTLED}) "
        "UNION ALL SELECT project_id, region_id, NULL, NULL, NULL, NULL, NULL, "
        f"NULL FROM b JOIN {given} ON project_id = b.value",
        [json.dumps(project_ids)],
    )


def _add_views(facts: dict[int, Facts], rows: list[tuple]) -> None:
    views: dict[int, dict[int, View]] = {}
    given: dict[int, list[int]] = {}
    for project_id, region_id, state, *streak in rows:
        if state is None:
            given.setdefault(project_id, []).append(region_id)
        else:
            views.setdefault(project_id, {})[region_id] = _view(state, *streak)
    for project_id in views.keys() | given.keys():
        facts[project_id] = facts[project_id]._replace(
            regions=tuple(given.get(project_id, ())),
            views=views.get(project_id, {}),
        )


@functools.lru_cache(maxsize=1024)
def _plain_facts(quorum, kind, interval, unit, recent) -> Facts:
    """A project's Facts before its views are read: most projects share a
    few, made once."""
    return Facts(
        quorum,
        kind == Project.Kind.HEARTBEAT,
        interval * SECONDS_PER_UNIT[unit],
        bool(recent),
    )


def _view(state, failures, successes, since, reason, polled_at) -> View:
    return View(
        Streak(state, failures, successes, aware(since)), reason, aware(polled_at)
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
