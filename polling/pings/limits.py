"""The rate limit of pings: at most PING_RATE_LIMIT a minute per project
(0: no limit), counted in the database, in the transaction that stores
the pings.

It is a fence of DatabaseResultStore (polling/store.py): the store calls
admit() inside its transaction, before anything is written, and saves
only the pings it returns. One statement counts a whole batch: each
(project, minute) of the batch is added to its PingCount row and the new
totals come back, so a batch costs one round trip however many pings it
holds, and every web worker on every machine counts against the same
rows. Counted where the pings are stored, a count never outlives a batch
that was rolled back, and pings the database refused are not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from django.conf import settings
from django.db import connection

from polling.engine.types import Outcome
from projects.incidents.batch_writes import batch_cursor
from projects.models import PingCount

Window = tuple[int, int]  # (project id, minutes since the epoch)


class RateLimit:
    """Admits each project's first PING_RATE_LIMIT pings of a minute, and
    adds the others (by identity) to `refused`, which its owner clears."""

    def __init__(self) -> None:
        self.refused: set[int] = set()

    def admit(self, outcomes: Sequence[Outcome]) -> list[Outcome]:
        limit = settings.PING_RATE_LIMIT
        if not limit or not outcomes:
            return list(outcomes)
        offered = Counter(_window(outcome) for outcome in outcomes)
        totals = count_pings(offered)
        numbered: Counter[Window] = Counter()
        admitted = []
        for outcome in outcomes:
            window = _window(outcome)
            numbered[window] += 1
            # This ping's number in its minute: those counted before the
            # batch, then the batch's own in order.
            if totals[window] - offered[window] + numbered[window] <= limit:
                admitted.append(outcome)
            else:
                self.refused.add(id(outcome))
        return admitted


def _window(outcome: Outcome) -> Window:
    return outcome.project_id, int(outcome.started_at.timestamp() // 60)


def count_pings(offered: Counter[Window]) -> dict[Window, int]:
    """Add each window's pings to its count; the new totals. In key order,
    so concurrent batches meet the rows in the same order. The counted
    projects' older minutes are deleted: a project has a row or two. On
    PostgreSQL both in one statement (one round trip a batch)."""
    windows = sorted(offered)
    columns = [[w[0] for w in windows], [w[1] for w in windows]]
    columns.append([offered[w] for w in windows])
    with batch_cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(_count_and_clear_sql(), columns)
            return {(pid, minute): count for pid, minute, count in cursor.fetchall()}
        cursor.execute(_count_sql(len(windows)), _as_rows(columns))
        totals = {(pid, minute): count for pid, minute, count in cursor.fetchall()}
        for minute in sorted({minute for _, minute in windows}):
            ids = [pid for pid, m in windows if m == minute]
            cursor.execute(_clear_sql(len(ids)), [minute, *ids])
    return totals


def _table() -> str:
    return connection.ops.quote_name(PingCount._meta.db_table)


def _as_rows(columns: list[list[int]]) -> list[int]:
    return [value for row in zip(*columns, strict=True) for value in row]


_UPSERT = (
    "INSERT INTO {table} (project_id, minute, count) {source} "
    "ON CONFLICT (project_id, minute) "
    "DO UPDATE SET count = {table}.count + excluded.count "
    "RETURNING project_id, minute, count"
)


def _count_and_clear_sql() -> str:
    """Each column one array: one statement text for any batch, prepared
    once. The DELETE sees the table as the statement found it, so it
    removes older minutes only, never a row the INSERT adds."""
    table = _table()
    source = "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::integer[])"
    return (
        f"WITH counted AS ({_UPSERT.format(table=table, source=source)}), "
        f"cleared AS (DELETE FROM {table} AS old USING counted "
        "WHERE old.project_id = counted.project_id AND old.minute < counted.minute) "
        "SELECT project_id, minute, count FROM counted"
    )


def _count_sql(rows: int) -> str:
    source = "VALUES " + ", ".join(["(%s, %s, %s)"] * rows)
    return _UPSERT.format(table=_table(), source=source)


def _clear_sql(ids: int) -> str:
    among = ", ".join(["%s"] * ids)
    return f"DELETE FROM {_table()} WHERE minute < %s AND project_id IN ({among})"
