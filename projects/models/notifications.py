from __future__ import annotations

from django.db import models
from django.utils import timezone

from projects.models.incidents import Incident
from projects.models.project import MAX_ERROR_MESSAGE_LENGTH, Project
from projects.models.teams import NamedInTeam, team_field


class NotificationChannel(NamedInTeam):
    """Where notifications go: a webhook, e-mail addresses or an Apprise URL."""

    class Kind(models.TextChoices):
        WEBHOOK = "webhook", "Webhook"
        EMAIL = "email", "E-mail"
        APPRISE = "apprise", "Apprise"

    team = team_field()
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=8, choices=Kind)
    # May hold credentials (Apprise URLs, webhook tokens): never logged,
    # masked in the admin.
    url = models.CharField(
        max_length=2000,
        help_text="The webhook URL, comma-separated e-mail addresses, or an "
        "Apprise URL.",
    )
    secret = models.CharField(
        max_length=200,
        blank=True,
        help_text="Webhooks only: the Standard Webhooks signing secret.",
    )
    is_default = models.BooleanField(
        default=False, help_text="Attached to new projects."
    )
    send_resolved = models.BooleanField(default=True)
    notify_degraded = models.BooleanField(
        "tell of degradations",
        default=False,
        help_text="Also send when a project is up but slower than its "
        "degraded limit, and when it is fast again.",
    )
    reminder_minutes = models.PositiveIntegerField(
        default=0,
        help_text="Re-notify this often while an incident is open and not "
        "acknowledged; 0 sends no reminders.",
    )
    enabled = models.BooleanField(default=True)
    # Set when a delivery fails permanently (a 4xx other than 408/429).
    failing_since = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.CharField(
        max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True, editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When a deliverer has promised to wake for this channel's next retry or
    # digest window: others seeing the promise return instead of waiting too.
    deliverer_wakes_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"], name="channel_name_per_team"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Notification(models.Model):
    """The outbox: one row per event and channel.

    Rows are written in the transaction that decides the event; the tasks
    process delivers them. `key` names the event for its channel, so an
    event is never queued twice, and it is the stable id receivers use to
    de-duplicate (the webhook-id header).
    """

    class Event(models.TextChoices):
        OPENED = "incident.opened", "Incident opened"
        RESOLVED = "incident.resolved", "Incident resolved"
        REMINDER = "incident.reminder", "Reminder"
        ACKNOWLEDGED = "incident.acknowledged", "Incident acknowledged"
        ESCALATED = "incident.escalated", "Incident escalated"
        DIGEST = "digest", "Digest"
        TEST = "test", "Test"
        MONITOR_UNREACHABLE = "monitor.unreachable", "Monitor cannot reach targets"
        MONITOR_REACHABLE = "monitor.reachable", "Monitor reaches targets again"
        POLLER_SILENT = "poller.silent", "Poller silent"
        POLLER_BACK = "poller.back", "Poller back"
        OBJECTIVE_BURNING = "objective.burning", "Error budget burning"
        OBJECTIVE_CALM = "objective.calm", "Error budget burn over"

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        HELD = "held", "Held"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"
        DROPPED = "dropped", "Dropped"
        DIGESTED = "digested", "Sent in a digest"

    key = models.CharField(max_length=200, unique=True)
    event = models.CharField(max_length=24, choices=Event)
    channel = models.ForeignKey(
        NotificationChannel, on_delete=models.CASCADE, related_name="notifications"
    )
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    incident = models.ForeignKey(
        Incident,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    payload = models.JSONField(default=dict)
    state = models.CharField(max_length=9, choices=State, default=State.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # A deliverer claims a row by moving this forward (compare-and-set); a
    # claim that outlives its deliverer expires and the row is taken again.
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)
    # Grouped events (see projects.notifications.digests) wait until the
    # deliverer releases them, alone or in a digest; the latest release per
    # channel and event decides whether the next one goes at once.
    released_at = models.DateTimeField(null=True, blank=True, editable=False)
    digest = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="covered",
    )

    class Meta:
        indexes = [
            # Rows due for delivery: the deliverer and the sweeper.
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(state="pending"),
                name="notification_due",
            ),
            # One channel's recent events: storm detection for digests.
            models.Index(
                fields=["channel", "created_at"], name="notification_channel_recent"
            ),
            # The latest releases of grouped events: digests.last_releases().
            models.Index(
                fields=["released_at"],
                condition=models.Q(released_at__isnull=False),
                name="notification_released",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.channel_id} ({self.state})"


class DeliveryAttempt(models.Model):
    """One try at delivering a notification: the delivery log."""

    class Result(models.TextChoices):
        DELIVERED = "delivered", "Delivered"
        RETRY = "retry", "Failed, will retry"
        FAILED = "failed", "Failed for good"

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="delivery_attempts"
    )
    attempted_at = models.DateTimeField(default=timezone.now)
    result = models.CharField(max_length=9, choices=Result)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["-attempted_at"], name="deliveryattempt_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.notification_id} {self.result} at {self.attempted_at}"
