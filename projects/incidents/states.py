"""The result writer's project-state step.

It runs in the writer's transaction in two parts. First, before the polls
are inserted, it locks the batch's project rows (in id order, on
PostgreSQL) and reads their stored streaks; after, it runs the polls
through the decision table and writes each project's new state. Deciding
from locked rows, not from memory, keeps the decision right across
restarts and with several writers: a second writer waits for the first to
commit and then sees its result.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from projects.incidents.batch_writes import datetime_adapter, update_rows
from projects.incidents.machine import (
    SETTLED,
    UP,
    Effect,
    Poll,
    Streak,
    Thresholds,
    run,
)
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import Project, Status

_COLUMNS = """id, state, consecutive_failures, consecutive_successes, failing_since,
    failure_threshold, recovery_threshold"""
# What the writer sets on each project of a batch, in state_row's order.
STATE_FIELDS = [
    "last_polled_at",
    "last_status",
    "last_status_code",
    "last_response_time_ms",
    "state",
    "consecutive_failures",
    "consecutive_successes",
    "failing_since",
    "tls_expires_at",
]
Stored = tuple[Streak, Thresholds]


def lock_projects(cursor, project_ids: Sequence[int]) -> dict[int, Stored]:
    """{id: (Streak, Thresholds)} of the projects that exist, locked until
    the transaction ends. The writer calls it first: outcomes of projects
    missing here were deleted meanwhile and are dropped."""
    table = connection.ops.quote_name(Project._meta.db_table)
    project_ids = sorted(set(project_ids))
    if connection.vendor == "postgresql":
        # NO KEY UPDATE, not UPDATE: rows of other tables referring to the
        # project (the polls inserted next, by this writer or another) take
        # KEY SHARE locks on it, which UPDATE would conflict with.
        cursor.execute(
            f"SELECT {_COLUMNS} FROM {table} WHERE id = ANY(%s) "
            "ORDER BY id FOR NO KEY UPDATE",
            [project_ids],
        )
    else:
        # SQLite: the writer's transaction already holds the database's
        # write lock (BEGIN IMMEDIATE).
        marks = ", ".join(["%s"] * len(project_ids))
        cursor.execute(
            f"SELECT {_COLUMNS} FROM {table} WHERE id IN ({marks})", project_ids
        )
    return {row[0]: streak_and_thresholds(row) for row in cursor.fetchall()}


def save_states(
    cursor,
    polls: Sequence[Poll],
    stored: dict[int, Stored],
    *,
    in_maintenance: Callable[[Poll], bool] | None = None,
) -> dict[int, Effect]:
    """Update each project's current state from its polls in this batch.
    Returns what the polls did to each project.

    `stored` is what lock_projects() read; every poll's project is in it.
    `cursor` is the writer's cursor in its transaction (see
    projects.incidents.batch_writes); `in_maintenance` is maintenance_test(polls),
    when the caller has it already."""
    by_project: dict[int, list[Poll]] = defaultdict(list)
    for poll in sorted(polls, key=lambda p: p.at):
        by_project[poll.project_id].append(poll)
    if not by_project:
        return {}
    if in_maintenance is None:
        in_maintenance = maintenance_test(polls)
    effects = {
        project_id: run(
            stored[project_id][0],
            project_polls,
            stored[project_id][1],
            in_maintenance=in_maintenance,
        )
        for project_id, project_polls in by_project.items()
    }
    adapt = datetime_adapter()
    rows = [state_row(by_project[pid], e.after, adapt) for pid, e in effects.items()]
    update_rows(
        cursor,
        Project,
        STATE_FIELDS,
        rows,
        expressions={"tls_expires_at": "COALESCE({new}, {old})"},
    )
    return effects


def maintenance_test(polls: Sequence[Poll]) -> Callable[[Poll], bool]:
    """Whether a poll of the batch fell in a maintenance window."""
    if not polls:
        return _never
    start, end = min(p.at for p in polls), max(p.at for p in polls)
    schedule = MaintenanceSchedule.load(start, end)
    if schedule.empty:
        return _never
    return lambda poll: schedule.covers(poll.project_id, poll.at)


def _never(poll: Poll) -> bool:
    return False


def streak_and_thresholds(row: tuple) -> tuple[Streak, Thresholds]:
    _, state, failures, successes, failing_since, failure, recovery = row
    if state == UP and not failures and not successes and failing_since is None:
        streak = SETTLED  # most rows: no new object to make
    else:
        streak = Streak(state, failures, successes, aware(failing_since))
    return streak, _thresholds(failure, recovery)


@functools.lru_cache(maxsize=256)
def _thresholds(failure: int, recovery: int) -> Thresholds:
    return Thresholds(failure, recovery)


def aware(value: datetime | str | None) -> datetime | None:
    """A datetime column read through a raw cursor: SQLite gives naive UTC
    datetimes (or text)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def state_row(polls: list[Poll], streak: Streak, adapt: Callable) -> tuple:
    """The project's new values of STATE_FIELDS, then its id, from its
    polls in time order."""
    last = polls[-1]
    expiries = [p.tls_expires_at for p in polls if p.tls_expires_at is not None]
    return (
        adapt(last.at),
        Status.UP if last.up else Status.DOWN,
        last.status_code,
        last.response_time_ms,
        streak.state,
        streak.failures,
        streak.successes,
        adapt(streak.failing_since),
        adapt(expiries[-1] if expiries else None),
        last.project_id,
    )
