from __future__ import annotations

from datetime import UTC, date, datetime, time

from django.db import models

from monitor.dates import when
from projects.models.fields import BucketCodesField, StatusField
from projects.models.indexes import TimeIndex
from projects.models.project import Project, Status

# The phases are stored as smallints (2 bytes each, nothing when null): a
# phase longer than this is stored as this.
MAX_PHASE_MS = 32767
# A failed poll's reason, or a ping's body (at most 10 KB). Long values
# only come from pings; PostgreSQL stores a varchar by its length, so the
# limit costs the other rows nothing.
MAX_MESSAGE_LENGTH = 10 * 1024


class PollFields(models.Model):
    """What a poll found; PollResult adds the project and the time that
    make its key."""

    # The column is `up`, a boolean: see StatusField.
    status = StatusField(choices=Status, db_column="up")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_time_ms = models.PositiveIntegerField(null=True, blank=True)
    error_message = models.CharField(
        "error or message",
        max_length=MAX_MESSAGE_LENGTH,
        blank=True,
        help_text="Why the poll failed, or the body a ping sent.",
    )
    # Where the response time went, summed over redirects; null when the
    # phase did not happen (a reused connection needs no DNS, connect or
    # TLS; plain http has no TLS; a poll that failed early got no byte).
    dns_ms = models.PositiveSmallIntegerField("DNS (ms)", null=True, blank=True)
    connect_ms = models.PositiveSmallIntegerField("connect (ms)", null=True, blank=True)
    tls_ms = models.PositiveSmallIntegerField("TLS (ms)", null=True, blank=True)
    first_byte_ms = models.PositiveSmallIntegerField(
        "first byte (ms)",
        null=True,
        blank=True,
        help_text="From the request sent to the response's first byte.",
    )
    # Ping checks: the round trips of the replies and the share of echo
    # requests lost; null for the other kinds (and no reply: no round trip).
    rtt_min_us = models.PositiveIntegerField(
        "round trip min (µs)", null=True, blank=True
    )
    rtt_avg_us = models.PositiveIntegerField(
        "round trip avg (µs)", null=True, blank=True
    )
    rtt_max_us = models.PositiveIntegerField(
        "round trip max (µs)", null=True, blank=True
    )
    loss_percent = models.PositiveSmallIntegerField("loss (%)", null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.project_id} {self.status} at {when(self.polled_at)}"

    @property
    def phases(self) -> list[tuple[str, int]]:
        """(name, ms) of the phases this poll went through, in order."""
        named = [
            ("DNS", self.dns_ms),
            ("connect", self.connect_ms),
            ("TLS", self.tls_ms),
            ("first byte", self.first_byte_ms),
        ]
        return [(name, ms) for name, ms in named if ms is not None]

    @property
    def phases_text(self) -> str:
        """ "DNS 2 · connect 1 · TLS 12 · first byte 30 ms", or "" when no
        phase was timed."""
        parts = [f"{name} {ms}" for name, ms in self.phases]
        return f"{' · '.join(parts)} ms" if parts else ""


POLLED_AT_HELP = (
    "The start of the window the poll was scheduled for (UTC); the request "
    "starts then, or as late as the poller's lag."
)


class PollResult(PollFields):
    # One result per project and window, however many pollers (the writers
    # insert with ON CONFLICT DO NOTHING), and the order the readers want:
    # one project's polls by time. Without an id the row is 8 bytes shorter
    # and the table has one B-tree, not two
    # (docs/benchmarks/2026-11-24-storage-bytes-per-poll.md).
    # With regions (docs/regions.md) one result per project, window and
    # region: the region comes last, so one project's polls stay in time
    # order in the key.
    pk = models.CompositePrimaryKey("project", "polled_at", "region")
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    polled_at = models.DateTimeField(help_text=POLLED_AT_HELP)
    # A smallint (Region's key): 2 bytes a row.
    region = models.ForeignKey(
        "projects.Region",
        on_delete=models.PROTECT,
        default=1,  # DEFAULT_REGION_ID
        related_name="+",
        db_index=False,
    )
    # Flows only (null for every other poll): each step run, in order, as
    # {name, up, status_code, ms, dns, connect, tls, first_byte, error},
    # and on the failing step `excerpt`, the start of its response with
    # the team's secrets masked (polling/engine/probes/flow.py).
    steps = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [
            # Results older than a date (retention) or within a day (the
            # admin's date drill-down); BRIN on PostgreSQL.
            TimeIndex(fields=["polled_at"], name="pollresult_polled_at"),
            # Down polls of one project, by time: the project page's outage
            # list (it walks from one outage to the previous one) and its
            # "down" history filter. Small, because most polls are up.
            models.Index(
                fields=["project", "polled_at"],
                condition=models.Q(status=Status.DOWN),
                name="pollresult_project_down",
            ),
        ]
        get_latest_by = "polled_at"


class PollResultRow(PollFields):
    """PollResult's table as the admin lists it, read-only.

    Django 5.2's admin refuses a model with a composite primary key, so the
    results list is registered on this unmanaged twin. Its key is only
    nominal: polled_at is unique per project, not across projects, so the
    admin shows rows without links to a page of their own (nothing looks a
    row up by this key).
    """

    project = models.ForeignKey(
        Project, on_delete=models.DO_NOTHING, related_name="+", db_constraint=False
    )
    polled_at = models.DateTimeField(primary_key=True, help_text=POLLED_AT_HELP)

    class Meta:
        managed = False
        db_table = "projects_pollresult"
        verbose_name = "poll result"


class RollupSums(models.Model):
    """The sums a rollup keeps of one project's polls in its period."""

    polls = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    # Polls that got a response; the average response time is
    # response_time_sum_ms / responses.
    responses = models.PositiveIntegerField(default=0)
    response_time_sum_ms = models.BigIntegerField(default=0)
    response_time_max_ms = models.PositiveIntegerField(null=True, blank=True)
    # Of the polls and failures above, those made during a maintenance
    # window: uptime leaves them out and shows them apart.
    maintenance_polls = models.PositiveIntegerField(default=0)
    maintenance_failures = models.PositiveIntegerField(default=0)
    # The response times as a log-bucket histogram {"bucket": count}
    # (projects/latency/histogram.py): the percentiles of any range.
    histogram = models.JSONField(
        default=dict, db_default=models.Value({}, models.JSONField()), blank=True
    )

    class Meta:
        abstract = True


class HourlyRollup(RollupSums):
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
    # The same histogram as the daily rollups', stored as codes the writer
    # appends to (BucketCodesField says why).
    histogram = BucketCodesField(default=dict, db_default="", blank=True)

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


# A day that is not a plain good one: a failure, maintenance, or no polls.
# Status pages read only these days one by one (the rest are summed), and
# a partial index holds only them.
IMPERFECT_DAY = (
    models.Q(failures__gt=0) | models.Q(maintenance_polls__gt=0) | models.Q(polls=0)
)


class DailyRollup(RollupSums):
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
            # A status page's imperfect days: at 500 projects over 90 days,
            # reading them through daily_rollup_day went through all 45,000
            # rows for the 3 % that are not good days (9 ms of the
            # database's CPU, 2 ms with this index). Its size follows the
            # bad days, not the days.
            models.Index(
                fields=["day", "project"],
                name="daily_rollup_imperfect_day",
                condition=IMPERFECT_DAY,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day:%Y-%m-%d} {self.polls} polls"


def rollup_hour(moment: datetime) -> datetime:
    """The start of the UTC hour whose rollup counts a poll at `moment`."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def utc_midnight(day: date) -> datetime:
    """The start of a UTC day, the one its DailyRollup counts from."""
    return datetime.combine(day, time(), tzinfo=UTC)
