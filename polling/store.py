"""The poller's only contact with the database: load targets, save outcomes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)

from polling.deadlines import move_deadlines
from polling.engine.types import OK_STATUS, JsonAssertion, Keyword, Outcome, Target
from polling.engine.writer import StoreUnavailable
from projects.expectations import parse_expected_value, parse_status_codes
from projects.incidents.certificates import Sighting, record_certificates
from projects.incidents.machine import Poll
from projects.incidents.recorder import record_incidents
from projects.incidents.states import save_states
from projects.models import (
    MAX_ERROR_MESSAGE_LENGTH,
    MAX_MESSAGE_LENGTH,
    HourlyRollup,
    PollResult,
    Project,
    Status,
)

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
    "follow_redirects",
    "verify_tls",
    "max_response_time_ms",
    "keyword",
    "keyword_mode",
    "keyword_case_sensitive",
    "json_query",
    "json_operator",
    "json_expected",
    "kind",
    "grace_seconds",
    "ping_deadline",
    "failure_threshold",
    "recovery_threshold",
]


def target_from_project(project: Project) -> Target:
    try:
        expected_status, problem = parse_status_codes(project.expected_status), ""
    except ValueError as error:
        # Saved around the admin's validation: every poll says why.
        expected_status, problem = OK_STATUS, f"invalid expected status: {error}"
    return Target(
        project_id=project.pk,
        url=project.url,
        method=project.method,
        headers=tuple(sorted(project.headers.items())),
        body=project.body,
        expected_status=expected_status,
        interval_seconds=project.interval_seconds,
        timeout_seconds=project.timeout_seconds,
        follow_redirects=project.follow_redirects,
        verify_tls=project.verify_tls,
        max_response_time_ms=project.max_response_time_ms,
        keyword=_keyword(project),
        json_assertion=_json_assertion(project),
        problem=problem,
        failure_threshold=project.failure_threshold,
        recovery_threshold=project.recovery_threshold,
        **_heartbeat_fields(project),
    )


def _heartbeat_fields(project: Project) -> dict:
    if not project.is_heartbeat:
        return {}
    return {
        "heartbeat": True,
        "grace_seconds": project.grace_seconds,
        "ping_deadline": project.ping_deadline,
    }


def _keyword(project: Project) -> Keyword | None:
    if not project.keyword:
        return None
    return Keyword(
        project.keyword,
        present=project.keyword_mode == Project.KeywordMode.CONTAINS,
        case_sensitive=project.keyword_case_sensitive,
    )


def _json_assertion(project: Project) -> JsonAssertion | None:
    if not project.json_query:
        return None
    return JsonAssertion(
        project.json_query,
        project.json_operator,
        parse_expected_value(project.json_expected),
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


class DatabaseTargetSource:
    """The enabled projects, read from the database for the Coordinator."""

    def load_all(self) -> list[Target]:
        return load_targets()

    def load_one(self, project_id: int) -> Target | None:
        return load_target(project_id)

    def close(self) -> None:
        close_connection()


def is_connection_error(error: BaseException) -> bool:
    """Whether the error says the database could not be reached or the
    connection was lost (or, on SQLite, the database was locked), as
    opposed to refusing the data."""
    driver = connection.Database
    return isinstance(
        error,
        OperationalError
        | InterfaceError
        | driver.OperationalError
        | driver.InterfaceError,
    )


def close_connection() -> None:
    """Close this thread's connection; threads call it before they end."""
    with contextlib.suppress(DatabaseError):
        connection.close()


class DatabaseResultStore:
    """Saves a batch of outcomes in one transaction: the PollResult rows,
    each project's current state and the hourly rollups move together."""

    def save(self, outcomes: Sequence[Outcome]) -> int:
        """Returns how many were saved; outcomes of deleted projects are
        dropped quietly. Raises StoreUnavailable when the database cannot
        be reached; other errors (bad data, a bug) pass through."""
        try:
            with transaction.atomic():
                return _save(outcomes)
        except Exception as error:
            if not is_connection_error(error):
                raise
            # A broken connection would fail every retry; reconnect next time.
            close_connection()
            raise StoreUnavailable(str(error) or type(error).__name__) from error

    def close(self) -> None:
        close_connection()


def _save(outcomes: Sequence[Outcome]) -> int:
    outcomes = move_deadlines(outcomes)
    if not outcomes:
        return 0
    # Short statements run once per row with executemany: the drivers parse
    # and plan them once, where one long multi-row statement is parsed
    # afresh for every batch (psycopg does not cache long queries), which
    # cost more CPU than the polling itself. Each statement skips projects
    # deleted meanwhile, so their outcomes are dropped quietly.
    with _batch_cursor() as cursor:
        cursor.executemany(_insert_result_sql(), [_result_row(o) for o in outcomes])
        saved = cursor.rowcount
        effects = save_states(cursor, [_poll(o) for o in outcomes])
        cursor.executemany(_upsert_rollup_sql(), _rollup_rows(outcomes))
    if effects:
        record_incidents(effects, at=max(o.started_at for o in outcomes))
    record_certificates(_sightings(outcomes))
    return saved


def _sightings(outcomes: Sequence[Outcome]) -> list[Sighting]:
    return [
        Sighting(o.project_id, o.started_at, o.tls_expires_at)
        for o in outcomes
        if o.tls_expires_at is not None
    ]


def _poll(outcome: Outcome) -> Poll:
    return Poll(
        project_id=outcome.project_id,
        at=outcome.started_at,
        up=outcome.up,
        error=outcome.error[:MAX_ERROR_MESSAGE_LENGTH],
        status_code=outcome.status_code,
        response_time_ms=outcome.response_time_ms,
    )


@contextlib.contextmanager
def _batch_cursor() -> Iterator:
    """A cursor for executemany on this thread's connection, in its
    transaction, raising Django's database errors."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    # Django binds parameters on the client: psycopg renders every row into
    # SQL text in Python. A plain psycopg cursor sends them apart from a
    # statement it prepares once, for a fraction of the CPU.
    import psycopg

    connection.ensure_connection()
    with (
        connection.wrap_database_errors,
        psycopg.Cursor(connection.connection) as cursor,
    ):
        yield cursor


def _result_row(outcome: Outcome) -> tuple:
    return (
        outcome.project_id,
        connection.ops.adapt_datetimefield_value(outcome.started_at),
        Status.UP if outcome.up else Status.DOWN,
        outcome.status_code,
        outcome.response_time_ms,
        (outcome.error or outcome.message)[:MAX_MESSAGE_LENGTH],
        outcome.project_id,
    )


def _rollup_rows(outcomes: Sequence[Outcome]) -> list[tuple]:
    """The batch summed per (project, hour), ready to add to the rollups."""
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
    return [
        (project_id, connection.ops.adapt_datetimefield_value(hour), *row, project_id)
        for (project_id, hour), row in sums.items()
    ]


# The statements. Table and column names come from the models; every
# statement works on PostgreSQL and on SQLite (3.24+ for the upsert).


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _project_exists() -> str:
    return f"EXISTS (SELECT 1 FROM {_quote(Project._meta.db_table)} WHERE id = %s)"


def _insert_result_sql() -> str:
    return f"""
        INSERT INTO {_quote(PollResult._meta.db_table)}
            (project_id, polled_at, status, status_code, response_time_ms,
             error_message)
        SELECT %s, %s, %s, %s, %s, %s WHERE {_project_exists()}
    """


def _upsert_rollup_sql() -> str:
    table = _quote(HourlyRollup._meta.db_table)
    return f"""
        INSERT INTO {table} (project_id, hour, polls, failures, responses,
                             response_time_sum_ms, response_time_max_ms)
        SELECT %s, %s, %s, %s, %s, %s, %s WHERE {_project_exists()}
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
