"""Deleting millions of old rows without making the poller's writer wait.

Rows older than a cutoff are deleted in the order they lie in the table,
one short transaction per range of row addresses (SQLite's rowid,
PostgreSQL's ctid): the time index (BRIN on PostgreSQL) gives the first and
last address of the old rows once, then each chunk deletes the rows of its
range that are older than the cutoff, so exactly those go. The tables are
written in time order, so the old rows lie together at the start; no key
is needed (PollResult's is (project, polled_at)). Chunks are sized to take
about TARGET_CHUNK_SECONDS and followed by a pause:

- SQLite has one write lock, which each chunk holds; the pause lets the
  writer in, so it never waits longer than about one chunk;
- on PostgreSQL the writer never waits on a chunk's row locks (it touches
  none of the old rows); the pause leaves it I/O and CPU.

On PostgreSQL the BRIN ranges that held deleted rows are then desummarized.
VACUUM summarises them again once their space is free, so the rows written
into that space later are summarised by their own times; otherwise every
range would keep the time of the oldest row it ever held and each BRIN scan
for old rows would read the whole table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from django.db import DatabaseError, connection, models, transaction

from projects.models.indexes import TimeIndex

logger = logging.getLogger(__name__)

TARGET_CHUNK_SECONDS = 0.05
FIRST_CHUNK_ROWS = 1000
MIN_CHUNK_ROWS = 100
MAX_CHUNK_ROWS = 50_000
# SQLite's busy handler sleeps up to 100 ms between tries; a shorter pause
# could fall between two of them and starve the writer.
SQLITE_PAUSE_SECONDS = 0.1
# PostgreSQL's default pages_per_range for BRIN.
BRIN_PAGES_PER_RANGE = 128
# PostgreSQL's most rows on one 8 kB page (MaxHeapTuplesPerPage): a ctid
# (page, line) is address page * this + line, so a range of n addresses
# holds at most n rows, as a range of n rowids does.
ROWS_PER_PAGE_AT_MOST = 291


@dataclass
class Deleted:
    """What one delete_older_than() call did."""

    rows: int = 0
    chunks: int = 0
    # False when the deadline came first; the rest is left for the next run.
    finished: bool = True
    # PostgreSQL heap blocks where BRIN ranges start that lost rows.
    brin_ranges: set[int] = field(default_factory=set)


@dataclass
class Pacer:
    """Sizes chunks to take about `target_seconds` and pauses after each."""

    target_seconds: float = TARGET_CHUNK_SECONDS
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    size: int = FIRST_CHUNK_ROWS
    min_size: int = MIN_CHUNK_ROWS
    max_size: int = MAX_CHUNK_ROWS

    def adjust(self, elapsed: float) -> None:
        """Scale the next chunk towards the target, at most doubling or
        halving it at a time."""
        scale = self.target_seconds / max(elapsed, 0.001)
        scale = min(max(scale, 0.5), 2.0)
        self.size = int(min(max(self.size * scale, self.min_size), self.max_size))

    def pause(self, elapsed: float) -> None:
        if connection.vendor == "sqlite":
            self.sleep(max(elapsed, SQLITE_PAUSE_SECONDS))
        else:
            self.sleep(elapsed / 2)


def delete_older_than(
    model: type[models.Model],
    field_name: str,
    cutoff: datetime | date,
    *,
    pacer: Pacer | None = None,
    deadline: float | None = None,
) -> Deleted:
    """Delete every row of `model` whose `field_name` is before `cutoff`.

    Stops early, with finished=False, once `deadline` (on the pacer's
    clock) has passed; a later call carries on. Safe to interrupt at any
    point: each chunk commits on its own.
    """
    pacer = pacer or Pacer()
    where = _older_than(model, field_name, cutoff)
    deleted = Deleted()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT MIN({ADDRESS[connection.vendor]}), "
            f"MAX({ADDRESS[connection.vendor]}) FROM {where.sql}",
            where.params,
        )
        low, last = cursor.fetchone()
    if low is None:
        return deleted
    while low <= last:
        if deadline is not None and pacer.clock() >= deadline:
            deleted.finished = False
            break
        high = min(low + pacer.size, last + 1)
        started = pacer.clock()
        rows, ranges = _delete_chunk(where, low, high)
        elapsed = pacer.clock() - started
        deleted.rows += rows
        deleted.chunks += 1
        deleted.brin_ranges |= ranges
        low = high
        pacer.adjust(elapsed)
        if low <= last:
            pacer.pause(elapsed)
    desummarize(model, field_name, deleted.brin_ranges)
    return deleted


# A row's address, in the order rows lie in the table.
ADDRESS = {
    "sqlite": "rowid",
    "postgresql": (
        f"((ctid::text::point)[0]::bigint * {ROWS_PER_PAGE_AT_MOST}"
        " + (ctid::text::point)[1]::bigint)"
    ),
}


@dataclass(frozen=True)
class OlderThan:
    """ "<table> WHERE <time column> < %s", and its parameter."""

    sql: str
    params: list


def _older_than(model: type[models.Model], field_name: str, cutoff) -> OlderThan:
    quote = connection.ops.quote_name
    field = model._meta.get_field(field_name)
    return OlderThan(
        f"{quote(model._meta.db_table)} WHERE {quote(field.column)} < %s",
        [field.get_db_prep_value(cutoff, connection)],
    )


def _delete_chunk(where: OlderThan, low: int, high: int) -> tuple[int, set[int]]:
    """Delete the old rows with addresses low <= address < high in one
    transaction. Returns how many, and (PostgreSQL) the BRIN ranges they
    were in."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(
                f"DELETE FROM {where.sql} AND rowid >= %s AND rowid < %s",
                [*where.params, low, high],
            )
            return cursor.rowcount, set()
        # Bounds as ctids, so PostgreSQL reads just those pages (a TID
        # range scan).
        cursor.execute(
            f"""
            WITH gone AS (
                DELETE FROM {where.sql}
                AND ctid >= ('(' || %s::bigint || ',' || %s::bigint || ')')::tid
                AND ctid < ('(' || %s::bigint || ',' || %s::bigint || ')')::tid
                RETURNING ctid)
            SELECT (ctid::text::point)[0]::bigint / %s * %s AS range_start,
                   count(*)
            FROM gone GROUP BY 1
            """,
            [
                *where.params,
                *divmod(low, ROWS_PER_PAGE_AT_MOST),
                *divmod(high, ROWS_PER_PAGE_AT_MOST),
                BRIN_PAGES_PER_RANGE,
                BRIN_PAGES_PER_RANGE,
            ],
        )
        rows = cursor.fetchall()
    return sum(count for _, count in rows), {start for start, _ in rows}


def desummarize(
    model: type[models.Model], field_name: str, range_starts: set[int]
) -> None:
    """Forget the BRIN summaries of these ranges (PostgreSQL only).

    Takes a lock that VACUUM also takes, never one the writer's inserts
    wait for; when a VACUUM of the table is running, this gives up after
    100 ms rather than cancel it, and the ranges stay as they are.
    """
    index = _brin_index_name(model, field_name)
    if connection.vendor != "postgresql" or not range_starts or index is None:
        return
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '100ms'")
            cursor.executemany(
                "SELECT brin_desummarize_range(%s::regclass, %s)",
                [(index, start) for start in sorted(range_starts)],
            )
    except DatabaseError as error:
        logger.info("BRIN ranges of %s kept as they are: %s", index, error)


def _brin_index_name(model: type[models.Model], field_name: str) -> str | None:
    """The name of the model's TimeIndex on `field_name`, if it has one."""
    for index in model._meta.indexes:
        if isinstance(index, TimeIndex) and list(index.fields) == [field_name]:
            return index.name
    return None
