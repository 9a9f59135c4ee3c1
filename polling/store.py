"""The poller's only contact with the database: load targets, save outcomes."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from django.db import DatabaseError, connection, transaction

from polling.types import Outcome, Target
from projects.models import HourlyRollup, PollResult, Project, Status

TARGET_FIELDS = [
    "id",
    "url",
    "method",
    "headers",
    "body",
    "expected_status",
    "interval",
    "interval_unit",
    "timeout_seconds",
]
STATE_FIELDS = [
    "last_polled_at",
    "last_status",
    "last_status_code",
    "last_response_time_ms",
    "consecutive_failures",
]


def target_from_project(project: Project) -> Target:
    return Target(
        project_id=project.pk,
        url=project.url,
        method=project.method,
        headers=tuple(sorted(project.headers.items())),
        body=project.body,
        expected_status=project.expected_status,
        interval_seconds=project.interval_seconds,
        timeout_seconds=project.timeout_seconds,
    )


def load_targets() -> list[Target]:
    """Every enabled project, as targets."""
    projects = Project.objects.filter(enabled=True).only(*TARGET_FIELDS)
    return [target_from_project(p) for p in projects.iterator(chunk_size=2000)]


def load_target(project_id: int) -> Target | None:
    """The project as a target, or None when it is disabled or gone."""
    project = (
        Project.objects.filter(pk=project_id, enabled=True).only(*TARGET_FIELDS).first()
    )
    return None if project is None else target_from_project(project)


def close_connection() -> None:
    """Close this thread's connection; threads call it before they end."""
    with contextlib.suppress(DatabaseError):
        connection.close()


class DatabaseResultStore:
    """Saves a batch of outcomes in one transaction: the PollResult rows,
    each project's current state and the hourly rollups move together."""

    def save(self, outcomes: Sequence[Outcome]) -> int:
        """Returns how many were saved; outcomes of deleted projects are
        dropped quietly."""
        try:
            with transaction.atomic():
                return _save(outcomes)
        except DatabaseError:
            # A broken connection would fail every retry; reconnect next time.
            close_connection()
            raise

    def close(self) -> None:
        close_connection()


def _save(outcomes: Sequence[Outcome]) -> int:
    failures_so_far = dict(
        Project.objects.filter(pk__in={o.project_id for o in outcomes}).values_list(
            "pk", "consecutive_failures"
        )
    )
    kept = [o for o in outcomes if o.project_id in failures_so_far]
    PollResult.objects.bulk_create(_result_row(o) for o in kept)
    _update_current_state(kept, failures_so_far)
    _add_to_rollups(kept)
    return len(kept)


def _result_row(outcome: Outcome) -> PollResult:
    return PollResult(
        project_id=outcome.project_id,
        polled_at=outcome.started_at,
        status=Status.UP if outcome.up else Status.DOWN,
        status_code=outcome.status_code,
        response_time_ms=outcome.response_time_ms,
        error_message=outcome.error[
            : PollResult._meta.get_field("error_message").max_length
        ],
    )


def _update_current_state(
    outcomes: Sequence[Outcome], failures_so_far: dict[int, int]
) -> None:
    by_project: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in sorted(outcomes, key=lambda o: o.started_at):
        by_project[outcome.project_id].append(outcome)
    rows = []
    for project_id, history in by_project.items():
        last = history[-1]
        failures = _trailing_failures(history)
        if failures == len(history):
            failures += failures_so_far[project_id]
        rows.append(
            (
                connection.ops.adapt_datetimefield_value(last.started_at),
                Status.UP if last.up else Status.DOWN,
                last.status_code,
                last.response_time_ms,
                failures,
                project_id,
            )
        )
    # One prepared UPDATE run per row: Django's bulk_update builds a CASE
    # per field and row in Python, which cost ten times the rest of a batch.
    with connection.cursor() as cursor:
        cursor.executemany(_update_state_sql(), rows)


def _update_state_sql() -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(
        f"{quote(Project._meta.get_field(name).column)} = %s" for name in STATE_FIELDS
    )
    return f"UPDATE {quote(Project._meta.db_table)} SET {columns} WHERE id = %s"


def _trailing_failures(history: Sequence[Outcome]) -> int:
    count = 0
    for outcome in reversed(history):
        if outcome.up:
            break
        count += 1
    return count


def _add_to_rollups(outcomes: Sequence[Outcome]) -> None:
    """Add the batch to each (project, hour) rollup in one upsert."""
    sums: dict[tuple[int, datetime], list] = {}
    for outcome in outcomes:
        hour = outcome.started_at.replace(minute=0, second=0, microsecond=0)
        row = sums.setdefault((outcome.project_id, hour), [0, 0, 0, 0, None])
        row[0] += 1
        row[1] += 0 if outcome.up else 1
        if outcome.response_time_ms is not None:
            row[2] += 1
            row[3] += outcome.response_time_ms
            row[4] = max(row[4] or 0, outcome.response_time_ms)
    if not sums:
        return
    params = []
    for (project_id, hour), row in sums.items():
        params += [project_id, connection.ops.adapt_datetimefield_value(hour), *row]
    with connection.cursor() as cursor:
        cursor.execute(_upsert_sql(len(sums)), params)


def _upsert_sql(rows: int) -> str:
    table = connection.ops.quote_name(HourlyRollup._meta.db_table)
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * rows)
    return f"""
        INSERT INTO {table} (project_id, hour, polls, failures, responses,
                             response_time_sum_ms, response_time_max_ms)
        VALUES {values}
        ON CONFLICT (project_id, hour) DO UPDATE SET
            polls = {table}.polls + excluded.polls,
            failures = {table}.failures + excluded.failures,
            responses = {table}.responses + excluded.responses,
            response_time_sum_ms =
                {table}.response_time_sum_ms + excluded.response_time_sum_ms,
            response_time_max_ms = CASE
                WHEN {table}.response_time_max_ms IS NULL
                  OR excluded.response_time_max_ms > {table}.response_time_max_ms
                THEN excluded.response_time_max_ms
                ELSE {table}.response_time_max_ms
            END
    """
