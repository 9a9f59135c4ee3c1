"""The result writer's project-state step.

It runs in the writer's transaction after the polls are inserted. It
locks the batch's project rows (in id order, on PostgreSQL) and reads
their stored streaks, runs the polls through the decision table, and
writes each project's new state. Deciding from locked rows, not from
memory, keeps the decision right across restarts and with several writers:
a second writer waits for the first to commit and then sees its result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from projects.incidents.machine import Effect, Poll, Streak, Thresholds, run
from projects.maintenance import MaintenanceSchedule
from projects.models import Project, Status

_COLUMNS = """id, state, consecutive_failures, consecutive_successes, failing_since,
    failure_threshold, recovery_threshold"""


def save_states(cursor, polls: Sequence[Poll]) -> dict[int, Effect]:
    """Update each project's current state from its polls in this batch.
    Returns what the polls did to each project that still exists.

    `cursor` is the writer's cursor in its transaction (a DB-API cursor
    taking %s parameters)."""
    by_project: dict[int, list[Poll]] = defaultdict(list)
    for poll in sorted(polls, key=lambda p: p.at):
        by_project[poll.project_id].append(poll)
    if not by_project:
        return {}
    stored = _lock_and_read(cursor, sorted(by_project))
    in_maintenance = _maintenance_test(polls)
    effects = {
        project_id: run(
            streak, by_project[project_id], thresholds, in_maintenance=in_maintenance
        )
        for project_id, (streak, thresholds) in stored.items()
    }
    rows = [_state_row(by_project[pid][-1], e.after) for pid, e in effects.items()]
    cursor.executemany(_update_sql(), rows)
    return effects


def _maintenance_test(polls: Sequence[Poll]) -> Callable[[Poll], bool]:
    """Whether a poll of the batch fell in a maintenance window."""
    start, end = min(p.at for p in polls), max(p.at for p in polls)
    schedule = MaintenanceSchedule.load(start, end)
    if schedule.empty:
        return _never
    return lambda poll: schedule.covers(poll.project_id, poll.at)


def _never(poll: Poll) -> bool:
    return False


def _lock_and_read(cursor, project_ids: list[int]) -> dict[int, tuple]:
    """{id: (Streak, Thresholds)} of the projects that exist, locked until
    the transaction ends."""
    table = connection.ops.quote_name(Project._meta.db_table)
    if connection.vendor == "postgresql":
        # NO KEY UPDATE, not UPDATE: the rows inserted just before hold
        # KEY SHARE locks on their projects, which UPDATE would wait for.
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
    return {row[0]: _streak_and_thresholds(row) for row in cursor.fetchall()}


def _streak_and_thresholds(row: tuple) -> tuple[Streak, Thresholds]:
    _, state, failures, successes, failing_since, failure, recovery = row
    streak = Streak(state, failures, successes, _aware(failing_since))
    return streak, Thresholds(failure, recovery)


def _aware(value: datetime | str | None) -> datetime | None:
    """A datetime column read through a raw cursor: SQLite gives naive UTC
    datetimes (or text)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _state_row(last: Poll, streak: Streak) -> tuple:
    adapt = connection.ops.adapt_datetimefield_value
    return (
        adapt(last.at),
        Status.UP if last.up else Status.DOWN,
        last.status_code,
        last.response_time_ms,
        streak.state,
        streak.failures,
        streak.successes,
        adapt(streak.failing_since),
        last.project_id,
    )


def _update_sql() -> str:
    return f"""
        UPDATE {connection.ops.quote_name(Project._meta.db_table)} SET
            last_polled_at = %s,
            last_status = %s,
            last_status_code = %s,
            last_response_time_ms = %s,
            state = %s,
            consecutive_failures = %s,
            consecutive_successes = %s,
            failing_since = %s
        WHERE id = %s
    """
