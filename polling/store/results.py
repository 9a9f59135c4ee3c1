"""Saving outcomes: one transaction per batch stores the polls, each
project's state, the hourly rollups, incidents and outbox rows, behind the
lease fence when several pollers share the projects."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from django.db import (
    transaction,
)
from django.db.models import NOT_PROVIDED

from polling.database_probe import database_answers
from polling.engine.types import Outcome
from polling.engine.writer import StoreUnavailable
from polling.regions import RegionBook, region_id
from polling.store.connections import close_connection, is_connection_error
from polling.store.deadlines import move_deadlines
from projects.incidents.batch_writes import (
    batch_cursor,
    datetime_adapter,
    insert_rows,
    pipeline,
    upsert_rows,
)
from projects.incidents.certificates import Sighting, record_certificates
from projects.incidents.degradation import record_degradations
from projects.incidents.machine import Poll
from projects.incidents.recorder import record_incidents
from projects.incidents.region_rows import lock_with_facts
from projects.incidents.regions import RegionView, as_verdicts, save_region_states
from projects.incidents.states import lock_projects, maintenance_test, save_states
from projects.latency.histogram import code
from projects.models import (
    DEFAULT_REGION_ID,
    MAX_ERROR_MESSAGE_LENGTH,
    MAX_MESSAGE_LENGTH,
    MAX_PHASE_MS,
    HourlyRollup,
    PollResult,
)


class Fence(Protocol):
    def admit(self, outcomes: Sequence[Outcome]) -> list[Outcome]:
        """The outcomes this poller may still save, checked in (and held
        until the end of) the writer's transaction."""


class DatabaseResultStore:
    """Saves a batch of outcomes in one transaction: the PollResult rows,
    each project's current state and the hourly rollups move together.

    With a fence (several pollers: polling/leases.py), only the outcomes
    of shards this poller still holds are saved."""

    def __init__(
        self,
        *,
        fence: Fence | None = None,
        region_id: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fence = fence
        # The region the outcomes were polled from (POLLER_REGION when None:
        # the default region needs no query) and the regions as the writer
        # last looked at them (docs/regions.md).
        self._region_id = region_id
        self._regions = RegionBook(clock)

    def save(self, outcomes: Sequence[Outcome]) -> int:
        """Returns how many were saved; outcomes of deleted projects, and
        of shards lost to another poller, are dropped quietly. Raises
        StoreUnavailable when the database cannot be reached; other errors
        (bad data, a bug) pass through."""
        try:
            try:
                with transaction.atomic():
                    admitted = self._admit(outcomes)
                    return _save(admitted, view=self._view())
            except _StoredBefore:
                # The answer to an earlier commit of these outcomes was lost
                # (a writer process that died, a connection cut) and they
                # came again. What was stored then counted then.
                with transaction.atomic():
                    return _save(
                        self._admit(admitted), view=self._view(), only_unstored=True
                    )
        except Exception as error:
            if not is_connection_error(error):
                raise
            # A broken connection would fail every retry; reconnect next time.
            close_connection()
            raise StoreUnavailable(str(error) or type(error).__name__) from error

    def close(self) -> None:
        close_connection()

    def reachable(self) -> bool:
        return database_answers()

    def _view(self) -> RegionView:
        if self._region_id is None:
            self._region_id = region_id()
        return self._regions.view(self._region_id)

    def _admit(self, outcomes: Sequence[Outcome]) -> Sequence[Outcome]:
        return outcomes if self._fence is None else self._fence.admit(outcomes)


class _StoredBefore(Exception):
    """A batch held results of windows stored already; its transaction is
    rolled back, so that nothing of them counts twice."""


def _save(
    outcomes: Sequence[Outcome],
    *,
    view: RegionView | None = None,
    only_unstored: bool = False,
) -> int:
    outcomes = move_deadlines(outcomes)
    if not outcomes:
        return 0
    several = view is not None and len(view.live) > 1
    with batch_cursor() as cursor, batch_cursor() as poll_cursor:
        ids = [o.project_id for o in outcomes]
        if several:
            at = min(o.due_at for o in outcomes)
            stored, facts = lock_with_facts(cursor, ids, view.region_id, at)
        else:
            stored = lock_projects(cursor, ids)
        # Projects deleted meanwhile: their outcomes are dropped quietly.
        outcomes = [o for o in outcomes if o.project_id in stored]
        region = DEFAULT_REGION_ID if view is None else view.region_id
        if only_unstored:
            outcomes = _unstored(outcomes, region)
        if not outcomes:
            return 0
        polls = [_poll(o) for o in outcomes]
        in_maintenance = maintenance_test(polls)
        if not several:
            # One region: each project's polls decide alone. Nothing in the
            # pipeline reads a result: the server writes the polls while
            # the states and rollups are worked out.
            with pipeline(cursor):
                _insert_results(poll_cursor, outcomes, region)
                effects = save_states(
                    cursor, polls, stored, in_maintenance=in_maintenance
                )
                _add_to_rollups(cursor, polls, in_maintenance)
        else:
            # Several: the region step decides from what the lock read,
            # and sends the polls and rollups in its own pipeline.
            def write(effects: dict) -> None:
                _insert_results(poll_cursor, outcomes, region)
                verdicts = as_verdicts(polls, effects)
                _add_to_rollups(cursor, verdicts, in_maintenance)

            effects = save_region_states(
                cursor,
                polls,
                stored,
                facts,
                view,
                in_maintenance=in_maintenance,
                write=write,
            )
        # Fewer polls went in than were given: the unique index skipped
        # windows stored already, which the state and rollups above counted
        # again. Known only once the pipeline is done; the common batch
        # pays for nothing but reading the count.
        if poll_cursor.rowcount < len(outcomes):
            raise _StoredBefore
    record_incidents(effects, at=max(o.started_at for o in outcomes))
    record_degradations(polls, in_maintenance)
    record_certificates(_sightings(outcomes))
    return len(outcomes)


def _unstored(outcomes: Sequence[Outcome], region: int) -> list[Outcome]:
    """The outcomes of windows not stored yet (for this region), the first
    of any window that comes twice."""
    stored = set(
        PollResult.objects.filter(
            region_id=region,
            project_id__in={o.project_id for o in outcomes},
            polled_at__in={o.due_at for o in outcomes},
        ).values_list("project_id", "polled_at")
    )
    unstored = []
    for outcome in outcomes:
        window = (outcome.project_id, outcome.due_at)
        if window not in stored:
            stored.add(window)
            unstored.append(outcome)
    return unstored


def _sightings(outcomes: Sequence[Outcome]) -> list[Sighting]:
    return [
        Sighting(o.project_id, o.started_at, o.tls_expires_at)
        for o in outcomes
        if o.tls_expires_at is not None
    ]


def _poll(outcome: Outcome) -> Poll:
    return Poll(
        project_id=outcome.project_id,
        at=outcome.due_at,
        up=outcome.up,
        error=outcome.error[:MAX_ERROR_MESSAGE_LENGTH],
        status_code=outcome.status_code,
        response_time_ms=outcome.response_time_ms,
        tls_expires_at=outcome.tls_expires_at,
    )


# The polls: the writer fills these fields from each outcome, in
# _result_row's order. Fields added to PollResult later are written with
# their default until _result_row gives them a value.
RESULT_FIELDS = (
    "project",
    "polled_at",
    "status",
    "status_code",
    "response_time_ms",
    "error_message",
    "dns_ms",
    "connect_ms",
    "tls_ms",
    "first_byte_ms",
    "rtt_min_us",
    "rtt_avg_us",
    "rtt_max_us",
    "loss_percent",
    "steps",
    "region",
)


def _insert_results(cursor, outcomes: Sequence[Outcome], region: int) -> None:
    others = [
        field
        for field in PollResult._meta.concrete_fields
        if not field.primary_key
        and field.name not in RESULT_FIELDS
        and field.db_default is NOT_PROVIDED  # the database fills those
    ]
    defaults = tuple(field.get_default() for field in others)
    adapt = datetime_adapter()
    rows = [(*_result_row(o, adapt), _steps(o), region, *defaults) for o in outcomes]
    fields = [*RESULT_FIELDS, *(field.name for field in others)]
    # A second result for a window (a poller that lost its shard, a
    # duplicate after a takeover) is dropped by the unique index.
    insert_rows(cursor, PollResult, fields, rows, skip_duplicates=True)


def _result_row(outcome: Outcome, adapt: Callable) -> tuple:
    return (
        outcome.project_id,
        # The window it was scheduled for: one result per project and
        # window, whichever poller made it.
        adapt(outcome.due_at),
        outcome.up,  # the status column is a boolean: see StatusField
        outcome.status_code,
        outcome.response_time_ms,
        (outcome.error or outcome.message)[:MAX_MESSAGE_LENGTH],
        _phase(outcome.dns_ms),
        _phase(outcome.connect_ms),
        _phase(outcome.tls_ms),
        _phase(outcome.first_byte_ms),
        *(outcome.rtt_us or _NO_ROUND_TRIPS),
        outcome.loss_percent,
    )


_NO_ROUND_TRIPS = (None, None, None)


def _steps(outcome: Outcome) -> str | None:
    """A flow poll's steps as JSON text (PollResult.steps), None for
    other polls. Text on both databases: PostgreSQL's row source casts it
    to jsonb, SQLite stores it as it is. Made in a plain loop and written
    without spaces: a flow poll's largest cost in the writer after its row."""
    if not outcome.steps:
        return None
    runs = []
    for run in outcome.steps:
        row = {
            "name": run.name,
            "up": run.up,
            "status_code": run.status_code,
            "ms": run.response_time_ms,
            "dns": _phase(run.dns_ms),
            "connect": _phase(run.connect_ms),
            "tls": _phase(run.tls_ms),
            "first_byte": _phase(run.first_byte_ms),
            "error": run.error[:MAX_ERROR_MESSAGE_LENGTH],
        }
        if run.excerpt:
            row["excerpt"] = run.excerpt
        runs.append(row)
    return _compact_json(runs)


_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def _phase(ms: int | None) -> int | None:
    return None if ms is None else min(ms, MAX_PHASE_MS)


# The hourly rollups: the batch summed per (project, hour), added to the
# stored sums.
ROLLUP_FIELDS = (
    "project",
    "hour",
    "polls",
    "failures",
    "responses",
    "response_time_sum_ms",
    "response_time_max_ms",
    "maintenance_polls",
    "maintenance_failures",
    "histogram",
)
ROLLUP_ADDITIONS = {
    "polls": "{old} + {new}",
    "failures": "{old} + {new}",
    "responses": "{old} + {new}",
    "response_time_sum_ms": "{old} + {new}",
    # Spelled out: PostgreSQL's GREATEST skips nulls, SQLite's MAX does not.
    "response_time_max_ms": "CASE WHEN {old} IS NULL OR {new} > {old} "
    "THEN {new} ELSE {old} END",
    "maintenance_polls": "{old} + {new}",
    "maintenance_failures": "{old} + {new}",
    # Codes, two characters per response (BucketCodesField): appended.
    "histogram": "{old} || {new}",
}


def _add_to_rollups(
    cursor, polls: Sequence[Poll], in_maintenance: Callable[[Poll], bool]
) -> None:
    upsert_rows(
        cursor,
        HourlyRollup,
        ROLLUP_FIELDS,
        _rollup_rows(polls, in_maintenance),
        conflict=("project", "hour"),
        updates=ROLLUP_ADDITIONS,
    )


_HOUR = timedelta(hours=1)


def _rollup_rows(
    polls: Sequence[Poll], in_maintenance: Callable[[Poll], bool]
) -> list[tuple]:
    """The batch summed per (project, hour), in ROLLUP_FIELDS' order; the
    histogram as its codes."""
    sums: dict[tuple[int, datetime], list] = {}
    hour = next_hour = None
    for poll in polls:
        # A batch spans an hour or two: truncating each poll's time would
        # cost more than the rest of its sums.
        if next_hour is None or not hour <= poll.at < next_hour:
            hour = poll.at.replace(minute=0, second=0, microsecond=0)
            next_hour = hour + _HOUR
        row = sums.get((poll.project_id, hour))
        if row is None:
            row = sums[poll.project_id, hour] = [0, 0, 0, 0, None, 0, 0, ""]
        row[0] += 1
        row[1] += 0 if poll.up else 1
        if poll.response_time_ms is not None:
            row[2] += 1
            row[3] += poll.response_time_ms
            row[4] = max(row[4] or 0, poll.response_time_ms)
            row[7] += code(poll.response_time_ms)
        if in_maintenance(poll):
            row[5] += 1
            row[6] += 0 if poll.up else 1
    adapt = datetime_adapter()
    # In key order, so concurrent writers meet the rows in the same order.
    return [
        (project_id, adapt(hour), *sums[project_id, hour])
        for project_id, hour in sorted(sums)
    ]
