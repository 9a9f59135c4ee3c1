from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from projects.validators import validate_headers, validate_http_url

DEFAULT_INTERVAL = 5
DEFAULT_TIMEOUT_SECONDS = 10
MAX_INTERVAL_SECONDS = 24 * 60 * 60
MAX_TIMEOUT_SECONDS = 120
MAX_ERROR_MESSAGE_LENGTH = 1000


class Status(models.TextChoices):
    UP = "up", "Up"
    DOWN = "down", "Down"


class Project(models.Model):
    class Method(models.TextChoices):
        GET = "GET", "GET"
        HEAD = "HEAD", "HEAD"
        POST = "POST", "POST"
        PUT = "PUT", "PUT"
        PATCH = "PATCH", "PATCH"
        DELETE = "DELETE", "DELETE"
        OPTIONS = "OPTIONS", "OPTIONS"

    class IntervalUnit(models.TextChoices):
        SECONDS = "seconds", "seconds"
        MINUTES = "minutes", "minutes"
        HOURS = "hours", "hours"

    name = models.CharField(max_length=200, unique=True)
    url = models.CharField(
        "URL",
        max_length=2000,
        validators=[validate_http_url],
        help_text="The http:// or https:// address to poll.",
    )
    method = models.CharField(max_length=7, choices=Method, default=Method.GET)
    headers = models.JSONField(
        default=dict,
        blank=True,
        help_text='Request headers as a JSON object, e.g. {"Accept": "text/html"}.',
    )
    body = models.TextField(blank=True, help_text="Optional request body.")
    expected_status = models.PositiveSmallIntegerField(
        default=200,
        validators=[MinValueValidator(100), MaxValueValidator(599)],
        help_text="A poll is up when the final response has this status code.",
    )
    interval = models.PositiveIntegerField(
        default=DEFAULT_INTERVAL, validators=[MinValueValidator(1)]
    )
    interval_unit = models.CharField(
        max_length=7, choices=IntervalUnit, default=IntervalUnit.MINUTES
    )
    timeout_seconds = models.PositiveSmallIntegerField(
        "timeout (seconds)",
        default=DEFAULT_TIMEOUT_SECONDS,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_TIMEOUT_SECONDS)],
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Current state, kept up to date by the poller's result writer so list
    # pages never aggregate PollResult rows per project.
    last_polled_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_status = models.CharField(
        max_length=4, choices=Status, blank=True, editable=False
    )
    last_status_code = models.PositiveSmallIntegerField(
        null=True, blank=True, editable=False
    )
    last_response_time_ms = models.PositiveIntegerField(
        null=True, blank=True, editable=False
    )
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("dashboard:project", args=[self.pk])

    def clean(self) -> None:
        super().clean()
        errors = {}
        try:
            # Not a field validator: those skip "empty" values such as [].
            validate_headers(self.headers)
        except ValidationError as error:
            errors["headers"] = error
        if self.interval and self.interval_unit in self.IntervalUnit.values:
            seconds = self.interval_seconds
            minimum = settings.MIN_POLL_INTERVAL
            if seconds < minimum:
                errors["interval"] = (
                    f"The interval must be at least {minimum} seconds "
                    f"(this is {seconds} s)."
                )
            elif seconds > MAX_INTERVAL_SECONDS:
                errors["interval"] = "The interval can be at most 24 hours."
            elif self.timeout_seconds and self.timeout_seconds > seconds:
                errors["timeout_seconds"] = (
                    f"The timeout cannot be longer than the interval ({seconds} s)."
                )
        if errors:
            raise ValidationError(errors)

    @property
    def interval_seconds(self) -> int:
        multiplier = {"seconds": 1, "minutes": 60, "hours": 3600}
        return self.interval * multiplier[self.interval_unit]

    @property
    def interval_display(self) -> str:
        """The interval as people say it: "every 5 min", "every 30 s"."""
        short_unit = {"seconds": "s", "minutes": "min", "hours": "h"}
        return f"every {self.interval} {short_unit[self.interval_unit]}"


class PollResult(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="results"
    )
    polled_at = models.DateTimeField(help_text="When the request started (UTC).")
    status = models.CharField(max_length=4, choices=Status)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_time_ms = models.PositiveIntegerField(null=True, blank=True)
    error_message = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)

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
