"""Outages: runs of consecutive down polls, newest first.

Finding runs by scanning every poll of a range reads every page of the
table that a busy project touches (0.8 s for 30 days of 10-second polls on
PostgreSQL). This query walks backwards from one outage to the one before
it instead, so its cost grows with the number of outages shown, not with
the number of polls:

1. e, the newest down poll before the cursor (the partial index on down
   polls finds it at once);
2. u, the newest up poll before e. Behind a long outage that would be a
   long scan, so it looks in e's own hour and then only in the newest
   earlier hour whose rollup counts an up poll;
3. the cursor moves to u, and the walk repeats up to `limit` times.

An outage then starts at the poll right after u and ends at the poll right
after e, its recovery.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection

from projects.dashboard.queries.functions import aware_datetime
from projects.models import HourlyRollup, PollResult

OUTAGES_SHOWN = 50
# Stands in for "no up poll before": compares below every real poll.
_BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Outage:
    started_at: datetime  # the first down poll
    last_failure_at: datetime  # the last down poll
    recovered_at: datetime | None  # the first up poll after; None: ongoing
    error: str  # the first down poll's error

    def duration(self, now: datetime) -> timedelta:
        return (self.recovered_at or now) - self.started_at


def recent_outages(
    project_id: int, *, since: datetime, limit: int = OUTAGES_SHOWN
) -> list[Outage]:
    """The newest `limit` outages that had a down poll at or after `since`.

    An outage that began before `since` keeps its true start.
    """
    params = {
        "project": project_id,
        "since": since,
        "limit": limit,
        "beginning": _BEGINNING,
    }
    with connection.cursor() as cursor:
        cursor.execute(_walk_sql(), params)
        return [
            Outage(
                aware_datetime(start),
                aware_datetime(last),
                aware_datetime(recovered),
                error,
            )
            for start, last, recovered, error in cursor.fetchall()
        ]


def _walk_sql() -> str:
    # A project has one poll at a time (the primary key), so a time names
    # a poll. `up` is the status column (see StatusField).
    results = connection.ops.quote_name(PollResult._meta.db_table)
    rollups = connection.ops.quote_name(HourlyRollup._meta.db_table)
    newest_down_before = f"""(
        SELECT d.polled_at FROM {results} d
        WHERE d.project_id = %(project)s AND NOT d.up
          AND d.polled_at >= %(since)s {{before_cursor}}
        ORDER BY d.polled_at DESC LIMIT 1)"""
    hour_of_e = f"""(
        SELECT MAX(h.hour) FROM {rollups} h
        WHERE h.project_id = %(project)s AND h.hour <= e.polled_at)"""
    last_hour_with_up = f"""(
        SELECT MAX(h.hour) FROM {rollups} h
        WHERE h.project_id = %(project)s AND h.hour < {hour_of_e}
          AND h.polls > h.failures)"""
    hour_after_it = f"""(
        SELECT MIN(h.hour) FROM {rollups} h
        WHERE h.project_id = %(project)s AND h.hour > {last_hour_with_up})"""
    # Without rollups (not built yet) the first scan is unbounded: slower,
    # still right.
    newest_up_before_e = f"""COALESCE(
        (SELECT x.polled_at FROM {results} x
         WHERE x.project_id = %(project)s AND x.up
           AND x.polled_at >= COALESCE({hour_of_e}, %(beginning)s)
           AND x.polled_at < e.polled_at
         ORDER BY x.polled_at DESC LIMIT 1),
        (SELECT x.polled_at FROM {results} x
         WHERE x.project_id = %(project)s AND x.up
           AND x.polled_at >= {last_hour_with_up}
           AND x.polled_at < {hour_after_it}
         ORDER BY x.polled_at DESC LIMIT 1))"""
    first_after = f"""(
        SELECT y.polled_at FROM {results} y
        WHERE y.project_id = %(project)s AND y.polled_at > {{at}}
        ORDER BY y.polled_at LIMIT 1)"""
    return f"""
    WITH RECURSIVE walk(n, e_at, u_at) AS (
        SELECT 1, e.polled_at, {newest_up_before_e}
        FROM {results} e
        WHERE e.project_id = %(project)s
          AND e.polled_at = {newest_down_before.format(before_cursor="")}
      UNION ALL
        SELECT w.n + 1, e.polled_at, {newest_up_before_e}
        FROM walk w
        JOIN {results} e ON e.project_id = %(project)s AND e.polled_at = {
        newest_down_before.format(before_cursor="AND d.polled_at < w.u_at")
    }
        WHERE w.n < %(limit)s
    )
    SELECT s.polled_at, w.e_at, r.polled_at, s.error_message
    FROM walk w
    JOIN {results} s ON s.project_id = %(project)s AND s.polled_at = {
        first_after.format(at="COALESCE(w.u_at, %(beginning)s)")
    }
    LEFT JOIN {results} r ON r.project_id = %(project)s AND r.polled_at = {
        first_after.format(at="w.e_at")
    }
    ORDER BY w.n
    """
