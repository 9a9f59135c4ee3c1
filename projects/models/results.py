from __future__ import annotations

from django.db import models

from projects.models.project import Project, Status

# A failed poll's reason, or a ping's body (at most 10 KB). Long values
# only come from pings; PostgreSQL stores a varchar by its length, so the
# limit costs the other rows nothing.
MAX_MESSAGE_LENGTH = 10 * 1024


class PollResult(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="results"
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
            # "latest results" table, the dashboard heartbeat strip.
            models.Index(
                fields=["project", "-polled_at", "-id"],
                name="pollresult_project_latest",
            ),
            # Results older than a date: retention clean-up, and the
            # PollResult admin's newest-first list and date drill-down.
            # The trailing id matches the admin's tie-breaking "-pk" order.
            models.Index(fields=["polled_at", "id"], name="pollresult_polled_at"),
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

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="hourly_rollups"
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

    def __str__(self) -> str:
        return f"{self.project_id} {self.hour:%Y-%m-%d %H}:00 {self.polls} polls"
