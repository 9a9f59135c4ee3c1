"""The writer's heartbeat step: move each heartbeat project's deadline,
and keep a missed-ping outcome only when it still holds.

It runs first in the writer's transaction. A missed ping moves the stored
deadline with a compare-and-set (only if it is still the one that passed),
so a ping that came meanwhile, or another poller that recorded the same
miss, makes it a no-op and the outcome is dropped: one result per missed
deadline, however many writers there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import connection

from polling.engine.types import Outcome
from projects.incidents.batch_writes import batch_cursor, datetime_adapter, update_rows
from projects.models import Project


def move_deadlines(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """The outcomes to store: all but missed pings that no longer hold."""
    if not any(outcome.deadline for outcome in outcomes):
        return list(outcomes)
    _move_pinged(outcomes)
    with connection.cursor() as cursor:
        return [o for o in outcomes if _kept(cursor, o)]


def _move_pinged(outcomes: Sequence[Outcome]) -> None:
    """Each pinged project's deadline to its latest ping's, in one
    statement: a herd of pings comes in batches of hundreds, and a round
    trip each was most of a batch's time."""
    latest: dict[int, datetime] = {}
    for outcome in outcomes:
        move = outcome.deadline
        if move is not None and move.passed is None:
            latest[outcome.project_id] = max(
                move.to, latest.get(outcome.project_id, move.to)
            )
    adapt = datetime_adapter()
    rows = [(adapt(to), project_id) for project_id, to in sorted(latest.items())]
    with batch_cursor() as cursor:
        update_rows(cursor, Project, ["ping_deadline"], rows)


def _kept(cursor, outcome: Outcome) -> bool:
    move = outcome.deadline
    if move is None or move.passed is None:  # a poll, or a ping
        return True
    adapt = connection.ops.adapt_datetimefield_value
    cursor.execute(
        _missed_sql(), [adapt(move.to), outcome.project_id, adapt(move.passed)]
    )
    return cursor.rowcount == 1


def _table() -> str:
    return connection.ops.quote_name(Project._meta.db_table)


def _missed_sql() -> str:
    return f"""
        UPDATE {_table()} SET ping_deadline = %s
        WHERE id = %s AND ping_deadline <= %s
    """
