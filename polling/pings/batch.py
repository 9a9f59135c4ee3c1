"""One batch of pings, in the ping writer's thread: their keys looked up
in one query, then the pings of known, enabled heartbeat projects counted
against the rate limit and stored through the poller's own store, in one
transaction with the projects' state, rollups, incidents and outbox rows.

The keys are read here rather than on each request: one query a batch
instead of one a ping, and no cache of keys in each web worker that an
edit in the admin (or another machine) would have to reach. A project
deleted between this read and the store's lock of its row has its ping
dropped by the store, as any outcome of a deleted project.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from polling.engine.heartbeats import ping_outcome
from polling.engine.types import Outcome
from polling.engine.writer import StoreUnavailable
from polling.pings.answers import Verdict
from polling.pings.limits import RateLimit
from polling.pings.rules import Ping
from polling.store import DatabaseResultStore, close_connection, is_connection_error
from projects.checks.units import SECONDS_PER_UNIT
from projects.incidents.batch_writes import batch_cursor
from projects.models import Project

LOOKUP_FIELDS = (
    "ping_key",
    "id",
    "kind",
    "enabled",
    "interval",
    "interval_unit",
    "grace_seconds",
)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class PingTarget:
    """What a ping needs of its project."""

    project_id: int
    heartbeat: bool
    enabled: bool
    interval_seconds: int
    grace_seconds: int


class PingStore:
    """Stores batches of pings; one lives as long as its writer thread, so
    the store keeps what it learnt of the regions between batches."""

    def __init__(self) -> None:
        self._limit = RateLimit()
        self._store = DatabaseResultStore(fence=self._limit)

    def save(self, pings: Sequence[Ping]) -> list[Verdict]:
        """Each ping's verdict, in order. Raises StoreUnavailable when the
        database cannot be reached: then nothing of the batch is stored."""
        try:
            verdicts, outcomes = _verdicts_before_storing(pings)
        except Exception as error:
            if not is_connection_error(error):
                raise
            close_connection()  # as the store does: reconnect next time
            raise StoreUnavailable(str(error) or type(error).__name__) from error
        if outcomes:
            self._limit.refused.clear()
            self._store.save(list(outcomes.values()))
        for index, outcome in outcomes.items():
            refused = id(outcome) in self._limit.refused
            verdicts[index] = Verdict.TOO_MANY if refused else Verdict.STORED
        return verdicts

    def close(self) -> None:
        self._store.close()


def _verdicts_before_storing(
    pings: Sequence[Ping],
) -> tuple[list[Verdict | None], dict[int, Outcome]]:
    """The verdicts the lookup decides (unknown, paused), and the outcomes
    to store by the index of their ping."""
    targets = look_up({ping.key for ping in pings})
    verdicts: list[Verdict | None] = [None] * len(pings)
    outcomes: dict[int, Outcome] = {}
    last_at: dict[int, datetime] = {}
    for index, ping in enumerate(pings):
        target = targets.get(ping.key)
        if target is None or not target.heartbeat:
            verdicts[index] = Verdict.UNKNOWN
        elif not target.enabled:
            verdicts[index] = Verdict.PAUSED
        else:
            outcomes[index] = _outcome(ping, target, last_at)
    return verdicts, outcomes


def _outcome(ping: Ping, target: PingTarget, last_at: dict) -> Outcome:
    # A result's window is its time: two pings of one project in the same
    # microsecond would be one window, and the second one skipped.
    at = ping.at
    previous = last_at.get(target.project_id)
    if previous is not None and at <= previous:
        at = previous + _MICROSECOND
    last_at[target.project_id] = at
    return ping_outcome(
        target.project_id,
        at=at,
        failed=ping.failed,
        message=ping.message,
        interval_seconds=target.interval_seconds,
        grace_seconds=target.grace_seconds,
    )


def look_up(keys: set[uuid.UUID]) -> dict[uuid.UUID, PingTarget]:
    """The projects with these ping keys, in one query."""
    table = connection.ops.quote_name(Project._meta.db_table)
    fields = ", ".join(LOOKUP_FIELDS)
    key_field = Project._meta.get_field("ping_key")
    if connection.vendor == "postgresql":
        # One array: one statement text for any batch, prepared once.
        among, params = "= ANY(%s)", [list(keys)]
    else:
        among = "IN (" + ", ".join(["%s"] * len(keys)) + ")"
        params = [key_field.get_db_prep_value(key, connection) for key in keys]
    with batch_cursor() as cursor:
        cursor.execute(f"SELECT {fields} FROM {table} WHERE ping_key {among}", params)
        rows = cursor.fetchall()
    return {key_field.to_python(row[0]): _target(row) for row in rows}


def _target(row: tuple) -> PingTarget:
    _, project_id, kind, enabled, interval, unit, grace = row
    return PingTarget(
        project_id=project_id,
        heartbeat=kind == Project.Kind.HEARTBEAT,
        enabled=enabled,
        interval_seconds=interval * SECONDS_PER_UNIT[unit],
        grace_seconds=grace,
    )
