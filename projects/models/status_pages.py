"""Public status pages: what customers of the watched sites see.

A StatusPage groups projects into sections (picked one by one, or all the
projects of a tag) and shows their state, uptime and incidents without a
login (unless private). A StatusUpdate is what people write about an
incident; Subscribers hear of incidents, updates and maintenance.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from monitor.dates import when
from projects.models.incidents import Incident
from projects.models.notifications import NotificationChannel
from projects.models.project import Project
from projects.models.tags import Tag
from projects.models.teams import team_field

UPTIME_DAYS_CHOICES = [
    (30, "30 days"),
    (90, "90 days"),
    (180, "180 days"),
    (365, "1 year"),
]
DEFAULT_UPTIME_DAYS = 90

validate_domain = RegexValidator(
    r"^(?=.{1,253}\Z)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\Z",
    "Enter a host name such as status.example.com (lower case, no scheme, "
    "no port, no path).",
    code="invalid_domain",
)


def own_host_names() -> set[str]:
    """The names people reach the monitor itself by: SITE_URL's host and
    SITE_HOSTS. A page claiming one would be served at / there, in place
    of the dashboard, to every user of every team."""
    names = {urlsplit(settings.SITE_URL).hostname or ""}
    names.update(settings.SITE_HOSTS)
    return {name.lower().rstrip(".") for name in names if name}


def new_token() -> str:
    """An unguessable key for a URL: 256 random bits."""
    return secrets.token_urlsafe(32)


class StatusPage(models.Model):
    class Visibility(models.TextChoices):
        PUBLIC = "public", "Public: anyone with the link"
        PRIVATE = "private", "Private: logged-in users only"

    team = team_field()
    title = models.CharField(max_length=200)
    slug = models.SlugField(
        max_length=100, unique=True, help_text="The page is at /status/<slug>/."
    )
    description = models.TextField(blank=True)
    logo_url = models.URLField(
        "logo URL",
        blank=True,
        help_text="Optional. Visitors' browsers load it, so a URL on this site "
        "keeps the page free of requests to other sites.",
    )
    custom_domain = models.CharField(
        max_length=253,
        blank=True,
        validators=[validate_domain],
        help_text="Optional: a host name (status.example.com) that serves this "
        "page at /. Point it at this site and add it to ALLOWED_HOSTS.",
    )
    visibility = models.CharField(
        max_length=7, choices=Visibility, default=Visibility.PUBLIC
    )
    show_uptime_days = models.PositiveSmallIntegerField(
        "uptime shown over", choices=UPTIME_DAYS_CHOICES, default=DEFAULT_UPTIME_DAYS
    )
    show_response_times = models.BooleanField(default=False)
    show_objectives = models.BooleanField(
        default=False,
        help_text="On: each section shows the attainment and budget left of "
        "the objectives on it and on its projects. Off: none is shown.",
    )
    incidents_need_update = models.BooleanField(
        "show incidents only once updated",
        default=False,
        help_text="On: a downtime incident appears on the page once someone "
        "has posted an update about it. Off: as soon as it opens.",
    )
    footer = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(
                fields=["custom_domain"],
                condition=~Q(custom_domain=""),
                name="status_page_one_per_domain",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("status_pages:page", args=[self.slug])

    def clean(self) -> None:
        """A custom domain is neither the monitor's own name nor one another
        page has (the constraint's error would not name the field)."""
        super().clean()
        domain = self.custom_domain
        if not domain:
            return
        if domain.lower() in own_host_names():
            raise ValidationError(
                {"custom_domain": "That is this monitor's own host name."}
            )
        taken = StatusPage.objects.filter(custom_domain=domain).exclude(pk=self.pk)
        if taken.exists():
            raise ValidationError(
                {"custom_domain": "Another status page already has that domain."}
            )

    @property
    def is_public(self) -> bool:
        return self.visibility == self.Visibility.PUBLIC


class StatusPageSection(models.Model):
    page = models.ForeignKey(
        StatusPage, on_delete=models.CASCADE, related_name="sections"
    )
    name = models.CharField(max_length=200)
    position = models.PositiveSmallIntegerField(default=0)
    projects = models.ManyToManyField(
        Project, blank=True, related_name="status_sections"
    )
    tag = models.ForeignKey(
        Tag,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="status_sections",
        help_text="Optional: also show every project with this tag.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.name


class StatusUpdate(models.Model):
    """What people say about an incident, in Markdown; the page shows an
    incident's updates as its timeline."""

    class Status(models.TextChoices):
        INVESTIGATING = "investigating", "Investigating"
        IDENTIFIED = "identified", "Identified"
        MONITORING = "monitoring", "Monitoring"
        RESOLVED = "resolved", "Resolved"

    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="status_updates"
    )
    status = models.CharField(
        max_length=13, choices=Status, default=Status.INVESTIGATING
    )
    message = models.TextField(help_text="Markdown; HTML is shown as text.")
    created_at = models.DateTimeField(default=timezone.now)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # An incident's timeline, and the newest update of the page's
            # incidents (the page's version).
            models.Index(fields=["incident", "created_at"], name="status_update_time"),
        ]

    def __str__(self) -> str:
        return f"{self.get_status_display()} at {when(self.created_at)}"


class Subscriber(models.Model):
    """Someone told of a page's incidents, updates and maintenance, by
    e-mail (after confirming the address) or by webhook.

    Messages go through the notification outbox: each subscriber has a
    channel of its own (never attached to projects, never a default), so
    retries, digests and the delivery log work for subscribers unchanged.
    """

    page = models.ForeignKey(
        StatusPage, on_delete=models.CASCADE, related_name="subscribers"
    )
    email = models.EmailField(blank=True)
    webhook_url = models.URLField("webhook URL", max_length=2000, blank=True)
    # In the confirmation and unsubscribe links.
    token = models.CharField(max_length=64, unique=True, default=new_token)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    channel = models.OneToOneField(
        NotificationChannel,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="subscriber",
    )
    created_at = models.DateTimeField(default=timezone.now)
    # The subscription form's rate limit counts recent rows per address.
    created_from = models.GenericIPAddressField(null=True, blank=True)
    # A private page's subscriber: the member who subscribed. The page's
    # news goes to them only while they are a member of its team
    # (projects.announcements.announcer); none, nothing is sent.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["page", "email"],
                condition=~Q(email=""),
                name="subscriber_one_per_page_email",
            ),
        ]
        indexes = [
            models.Index(fields=["created_from", "created_at"], name="subscriber_ip"),
        ]

    def __str__(self) -> str:
        return self.email or "webhook subscriber"

    @property
    def is_confirmed(self) -> bool:
        return self.confirmed_at is not None


class AnnouncementCursor(models.Model):
    """How far the announcer (projects.announcements.announcer) has looked:
    every change stamped up to `position` has been queued for the
    subscribers, so each run reads only what changed since. One row per
    `name`; runs move it forward by compare-and-set."""

    name = models.CharField(max_length=40, unique=True)
    position = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} up to {when(self.position)}"


@receiver(post_delete, sender=Subscriber, dispatch_uid="subscriber_channel")
def _forget_channel(sender, instance: Subscriber, **kwargs) -> None:
    """A subscriber's channel is its own: it goes with it, whether the
    subscriber left or its page was deleted."""
    if instance.channel_id:
        NotificationChannel.objects.filter(pk=instance.channel_id).delete()
