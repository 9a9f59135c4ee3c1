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
DEFAULT_FAILURE_THRESHOLD = 3
DEFAULT_RECOVERY_THRESHOLD = 1
MAX_THRESHOLD = 10


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
    failure_threshold = models.PositiveSmallIntegerField(
        default=DEFAULT_FAILURE_THRESHOLD,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_THRESHOLD)],
        help_text="Consecutive failed polls that confirm an outage.",
    )
    recovery_threshold = models.PositiveSmallIntegerField(
        default=DEFAULT_RECOVERY_THRESHOLD,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_THRESHOLD)],
        help_text="Consecutive successful polls that end an outage.",
    )
    channels = models.ManyToManyField(
        "projects.NotificationChannel",
        blank=True,
        related_name="projects",
        help_text="Where this project's incidents are sent.",
    )
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
