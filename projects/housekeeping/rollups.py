"""Recompute hourly rollups from the raw poll results.

The poller's result writer keeps HourlyRollup in step as it saves polls;
this rebuilds them in bulk, to seed test and benchmark data or to repair
rollups after results were imported or deleted by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from django.db import connection, transaction
from django.db.models import Count, Max, Min, Model, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, TruncHour

from projects.latency import histogram
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import HourlyRollup, PollResult, Status
from projects.models.results import rollup_hour


def rebuild_rollups(
    *, project_ids: Iterable[int] | None = None, since: datetime | None = None
) -> int:
    """Replace the rollups of `project_ids` (all projects when None) from
    the start of the hour holding `since` (all time when None) onwards.

    Runs as one DELETE and one INSERT ... SELECT ... GROUP BY in a single
    transaction, so readers see either the old rollups or the new ones.
    Returns how many rollup rows were written.
    """
    results = PollResult.objects.all()
    rollups = HourlyRollup.objects.all()
    if project_ids is not None:
        project_ids = list(project_ids)
        results = results.filter(project_id__in=project_ids)
        rollups = rollups.filter(project_id__in=project_ids)
    if since is not None:
        # A partial hour would be summed short; start at a whole hour.
        start = rollup_hour(since)
        results = results.filter(polled_at__gte=start)
        rollups = rollups.filter(hour__gte=start)
    with transaction.atomic():
        rollups.delete()
        written = insert_select(
            HourlyRollup, hourly_sums(results, _maintenance(results))
        )
        _fill_histograms(results, rollups)
        return written


def _fill_histograms(results: QuerySet[PollResult], rollups: QuerySet) -> None:
    """Set each rebuilt rollup's histogram from its hour's response times
    (the ORM has no aggregate for it; a repair, not the writer's path)."""
    counts: dict[tuple[int, datetime], dict[str, int]] = {}
    times = results.filter(response_time_ms__isnull=False).values_list(
        "project_id", "polled_at", "response_time_ms"
    )
    for project_id, polled_at, ms in times.iterator(chunk_size=5000):
        hour_counts = counts.setdefault((project_id, rollup_hour(polled_at)), {})
        histogram.add(hour_counts, {histogram.bucket(ms): 1})
    changed = []
    for row in rollups.only("pk", "project_id", "hour"):
        found = counts.get((row.project_id, rollup_hour(row.hour)))
        if found:
            row.histogram = found
            changed.append(row)
    HourlyRollup.objects.bulk_update(changed, ["histogram"], batch_size=500)


def _maintenance(results: QuerySet[PollResult]) -> Q | None:
    """Matches the results made during a maintenance window; None when
    there were none."""
    span = results.aggregate(start=Min("polled_at"), end=Max("polled_at"))
    if span["start"] is None:
        return None
    return MaintenanceSchedule.load(span["start"], span["end"]).poll_filter()


def hourly_sums(results: QuerySet[PollResult], maintenance: Q | None) -> QuerySet:
    """One row per project and UTC hour, named like HourlyRollup's fields;
    `maintenance` matches the results made during maintenance."""
    return (
        results.annotate(hour=TruncHour("polled_at", tzinfo=UTC))
        .values("project_id", "hour")
        .annotate(
            polls=Count("polled_at"),
            failures=Count("polled_at", filter=Q(status=Status.DOWN)),
            responses=Count("response_time_ms"),
            response_time_sum_ms=Coalesce(Sum("response_time_ms"), Value(0)),
            response_time_max_ms=Max("response_time_ms"),
            **_maintenance_counts(maintenance),
        )
        .order_by()
    )


def _maintenance_counts(maintenance: Q | None) -> dict:
    if maintenance is None:
        return {"maintenance_polls": Value(0), "maintenance_failures": Value(0)}
    return {
        "maintenance_polls": Count("polled_at", filter=maintenance),
        "maintenance_failures": Count(
            "polled_at", filter=maintenance & Q(status=Status.DOWN)
        ),
    }


def insert_select(model: type[Model], rows: QuerySet) -> int:
    """INSERT INTO model's table the rows of a values() queryset whose
    names are model's field names. Returns how many were inserted."""
    # The ORM has no INSERT ... SELECT; the SELECT is the ORM's own, and its
    # column order (values, then annotations) names the target columns.
    query = rows.query
    names = [*query.values_select, *query.annotation_select]
    columns = ", ".join(
        connection.ops.quote_name(model._meta.get_field(name).column) for name in names
    )
    select_sql, params = query.sql_with_params()
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({columns}) {select_sql}", params)
        return cursor.rowcount
