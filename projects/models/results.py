from __future__ import annotations

from django.db import models

from projects.models.indexes import TimeIndex
from projects.models.project import Project, Status

# A failed poll's reason, or a ping's body (at most 10 KB). Long values
# only come from pings; PostgreSQL stores a varchar by its length, so the
# limit costs the other rows nothing.
MAX_MESSAGE_LENGTH = 10 * 1024


class PollResult(models.Model):
    # No index of its own: pollresult_project_latest starts with project.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    polled_at = models.DateTimeField(help_text="When the request started (UTC).")
    status = models.CharField(max_length=4, choices=Status)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_time_ms = models.PositiveIntegerField(null=True, blank=True)
    error_message = models.CharField(
        "error or message",
        max_length=MAX_MESSAGE_LENGTH,
        blank=True,
        help_text="Why the poll failed, or the body a ping sent.",
    )

    class Meta:
        indexes = [
            # Latest results of one project: the project page, the admin
            # "latest results" table, the dashboard heartbeat strip. Ties on
            # polled_at are too rare to be worth 8 bytes a row for the id.
            models.Index(
                fields=["project", "-polled_at"], name="pollresult_project_latest"
            ),
            # Results older than a date (retention) or within a day (the
            # admin's date drill-down); BRIN on PostgreSQL.
            TimeIndex(fields=["polled_at"], name="pollresult_polled_at"),
            # Down polls of one project, by time: the project page's outage
            # list (it walks from one outage to the previous one) and its
            # "down" history filter. Small, because most polls are up.
            models.Index(
                fields=["project", "polled_at", "id"],
                condition=models.Q(status=Status.DOWN),
                name="pollresult_project_down",
            ),
        ]
        get_latest_by = "polled_at"

    def __str__(self) -> str:
        return f"{self.project_id} {self.status} at {self.polled_at:%Y-%m-%d %H:%M:%S}"


class HourlyRollup(models.Model):
    """One project's polls in one UTC hour, summed.

    The poller's result writer keeps these in step with PollResult, in the
    same transaction, so 30-day uptime and charts read a few hundred rows
    instead of tens of thousands.
    """

    # No index of its own: the unique constraint starts with project.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="hourly_rollups", db_index=False
    )
    hour = models.DateTimeField(help_text="Start of the UTC hour.")
    polls = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    # Polls that got a response; the average response time is
    # response_time_sum_ms / responses.
    responses = models.PositiveIntegerField(default=0)
    response_time_sum_ms = models.BigIntegerField(default=0)
    response_time_max_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also the index for "one project's hours in a range" (charts,
            # uptime) and the conflict target of the writer's upsert.
            models.UniqueConstraint(
                fields=["project", "hour"], name="rollup_one_per_project_hour"
            ),
        ]
        indexes = [
            # Hours to compact into days, and hours past
            # HOURLY_RETENTION_DAYS.
            TimeIndex(fields=["hour"], name="rollup_hour"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.hour:%Y-%m-%d %H}:00 {self.polls} polls"


class DailyRollup(models.Model):
    """One project's polls in one UTC day, summed from its hourly rollups.

    Filled by projects.housekeeping.compaction once a day is over; the
    dashboard reads these where the hourly rollups have been removed
    (HOURLY_RETENTION_DAYS) and they are kept DAILY_RETENTION_DAYS.
    """

    # No index of its own: the unique constraint starts with project.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="daily_rollups", db_index=False
    )
    day = models.DateField(help_text="The UTC day.")
    polls = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    responses = models.PositiveIntegerField(default=0)
    response_time_sum_ms = models.BigIntegerField(default=0)
    response_time_max_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also the index for "one project's days in a range".
            models.UniqueConstraint(
                fields=["project", "day"], name="daily_rollup_one_per_project_day"
            ),
        ]
        indexes = [
            # The newest compacted day (every dashboard page asks: a B-tree
            # answers at once, BRIN would read the table) and days past
            # DAILY_RETENTION_DAYS.
            models.Index(fields=["day"], name="daily_rollup_day"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day:%Y-%m-%d} {self.polls} polls"
