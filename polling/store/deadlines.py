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

from django.db import connection

from polling.engine.types import Outcome
from projects.models import Project


def move_deadlines(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """The outcomes to store: all but missed pings that no longer hold."""
    if not any(outcome.deadline for outcome in outcomes):
        return list(outcomes)
    with connection.cursor() as cursor:
        return [o for o in outcomes if o.deadline is None or _move(cursor, o)]


def _move(cursor, outcome: Outcome) -> bool:
    adapt = connection.ops.adapt_datetimefield_value
    move = outcome.deadline
    if move.passed is None:  # a ping
        cursor.execute(_ping_sql(), [adapt(move.to), outcome.project_id])
        return True
    cursor.execute(
        _missed_sql(), [adapt(move.to), outcome.project_id, adapt(move.passed)]
    )
    return cursor.rowcount == 1


def _table() -> str:
    return connection.ops.quote_name(Project._meta.db_table)


def _ping_sql() -> str:
    return f"""
        UPDATE {_table()} SET ping_deadline = %s WHERE id = %s
    """


def _missed_sql() -> str:
    return f"""
        UPDATE {_table()} SET ping_deadline = %s
        WHERE id = %s AND ping_deadline <= %s
    """
