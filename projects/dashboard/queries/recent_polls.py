"""Each project's latest polls, for the recent-poll strips on the overview.

One query for a whole page of projects. Each project's polls come from its
own short scan of the (project, polled_at) index; a window function
over all polls of the page's projects would read millions of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from projects.dashboard.queries.functions import aware_datetime
from projects.models import PollResult, Status

RECENT_POLLS = 50
# `up` is the status column, a boolean (see StatusField).
_COLUMNS = "project_id, polled_at, up, status_code, response_time_ms, error_message"


@dataclass(frozen=True, slots=True)
class RecentPoll:
    polled_at: datetime
    status: str
    status_code: int | None
    response_time_ms: int | None
    error: str


def latest_polls(
    project_ids: Sequence[int], *, count: int = RECENT_POLLS
) -> dict[int, list[RecentPoll]]:
    """{project id: its newest `count` polls, oldest first}."""
    strips: dict[int, list[RecentPoll]] = {pk: [] for pk in project_ids}
    if not project_ids:
        return strips
    if connection.vendor == "postgresql":
        sql, params = _lateral_sql(project_ids, count)
    else:
        sql, params = _union_sql(project_ids, count)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for project_id, polled_at, up, code, ms, error in cursor.fetchall():
            status = Status.UP if up else Status.DOWN
            poll = RecentPoll(aware_datetime(polled_at), status, code, ms, error)
            strips[project_id].append(poll)
    return strips


def _lateral_sql(project_ids: Sequence[int], count: int) -> tuple[str, list]:
    table = connection.ops.quote_name(PollResult._meta.db_table)
    sql = f"""
        SELECT r.* FROM unnest(%s::bigint[]) AS p(id)
        CROSS JOIN LATERAL (
            SELECT {_COLUMNS} FROM {table}
            WHERE project_id = p.id
            ORDER BY polled_at DESC LIMIT %s
        ) AS r
        ORDER BY r.project_id, r.polled_at
    """
    return sql, [list(project_ids), count]


def _union_sql(project_ids: Sequence[int], count: int) -> tuple[str, list]:
    # SQLite has no LATERAL; one small subquery per project does the same.
    table = connection.ops.quote_name(PollResult._meta.db_table)
    one = f"""SELECT * FROM (
        SELECT {_COLUMNS} FROM {table} WHERE project_id = %s
        ORDER BY polled_at DESC LIMIT %s)"""
    sql = " UNION ALL ".join([one] * len(project_ids))
    params = [value for pk in project_ids for value in (pk, count)]
    return f"{sql} ORDER BY project_id, polled_at", params
