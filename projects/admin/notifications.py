"""Channels, the outbox and the delivery log in the admin."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from projects.admin.scoping import TeamScopedAdmin
from projects.models import DeliveryAttempt, Notification, NotificationChannel
from projects.notifications.forms import ChannelForm
from projects.notifications.masking import masked_payload, masked_url
from projects.notifications.testing import send_test

# Classes in static/css/admin.css: the Content-Security-Policy refuses
# style attributes.
RESULT_COLOURS = {
    DeliveryAttempt.Result.DELIVERED: "green",
    DeliveryAttempt.Result.RETRY: "amber",
    DeliveryAttempt.Result.FAILED: "red",
}


def badge(text: str, colour: str) -> SafeString:
    return format_html(
        '<span class="admin-badge admin-badge-{}">{}</span>',
        colour,
        text,
    )


@admin.register(NotificationChannel)
class NotificationChannelAdmin(TeamScopedAdmin):
    form = ChannelForm
    list_display = [
        "name",
        "kind",
        "destination",
        "enabled",
        "is_default",
        "send_resolved",
        "reminder_minutes",
        "health",
    ]
    list_filter = ["kind", "enabled", "is_default"]
    search_fields = ["name"]
    actions = ["send_test_notification"]
    readonly_fields = ["destination", "health", "failing_since", "last_error"]
    fieldsets = [
        (None, {"fields": ["name", "kind", "enabled", "is_default"]}),
        ("Destination", {"fields": ["destination", "url", "secret"]}),
        ("What to send", {"fields": ["send_resolved", "reminder_minutes"]}),
        ("Health", {"fields": ["health", "failing_since", "last_error"]}),
    ]

    def get_fieldsets(self, request: HttpRequest, obj=None) -> list:
        """Someone who may not change the channel reads its masked
        destination only: the change page shows read-only fields in clear."""
        fieldsets = super().get_fieldsets(request, obj)
        if self.has_change_permission(request, obj):
            return fieldsets
        return [
            (title, {**options, "fields": _without_secrets(options["fields"])})
            for title, options in fieldsets
        ]

    @admin.display(description="destination")
    def destination(self, channel: NotificationChannel) -> str:
        return masked_url(channel.kind, channel.url) or "-"

    @admin.display(description="health", ordering="failing_since")
    def health(self, channel: NotificationChannel) -> SafeString:
        if channel.failing_since:
            return badge("failing", RESULT_COLOURS["failed"])
        return badge("ok", RESULT_COLOURS["delivered"])

    def save_model(self, request, channel, form, change) -> None:
        super().save_model(request, channel, form, change)
        if form.generated_secret:
            # Shown once, to the person who created it; never logged.
            self.message_user(
                request,
                f"Signing secret for “{channel.name}”: {form.generated_secret} "
                "(give it to the receiver to verify signatures).",
                messages.WARNING,
            )

    @admin.action(description="Send a test notification", permissions=["change"])
    def send_test_notification(self, request: HttpRequest, queryset: QuerySet) -> None:
        for channel in queryset:
            outcome = send_test(channel)
            level = messages.SUCCESS if outcome.delivered else messages.ERROR
            self.message_user(
                request, f"Test to “{channel.name}”: {outcome.summary}", level
            )


def _without_secrets(fields: list) -> list:
    return [name for name in fields if name not in ("url", "secret")]


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(TeamScopedAdmin):
    """The delivery log: every try at sending every notification."""

    list_display = [
        "attempted_at",
        "channel",
        "event",
        "project",
        "result_column",
        "http_status",
        "error",
        "duration_ms",
    ]
    list_filter = [
        "result",
        "notification__event",
        ("notification__channel", admin.RelatedOnlyFieldListFilter),
    ]
    list_select_related = ["notification__channel", "notification__project"]
    date_hierarchy = "attempted_at"
    ordering = ["-attempted_at"]
    show_facets = admin.ShowFacets.NEVER

    @admin.display(description="channel")
    def channel(self, attempt: DeliveryAttempt) -> str:
        return attempt.notification.channel.name

    @admin.display(description="event")
    def event(self, attempt: DeliveryAttempt) -> str:
        return attempt.notification.event

    @admin.display(description="project")
    def project(self, attempt: DeliveryAttempt) -> str:
        return attempt.notification.project or "-"

    @admin.display(description="result", ordering="result")
    def result_column(self, attempt: DeliveryAttempt) -> SafeString:
        return badge(attempt.get_result_display(), RESULT_COLOURS[attempt.result])

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(TeamScopedAdmin):
    """The outbox: what is queued, sent, retried or given up on."""

    list_display = [
        "created_at",
        "event",
        "channel",
        "project",
        "state",
        "attempts",
        "next_attempt_at",
        "last_error",
    ]
    list_filter = ["state", "event", ("channel", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["channel", "project"]
    ordering = ["-created_at"]
    actions = ["retry_now"]
    show_facets = admin.ShowFacets.NEVER
    # The payload is shown with its links and tokens masked: a subscriber's
    # confirm and unsubscribe links are capabilities (S4-10).
    exclude = ["payload"]
    readonly_fields = [
        *(field.name for field in Notification._meta.fields if field.name != "payload"),
        "masked_payload",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="payload")
    def masked_payload(self, notification: Notification) -> str:
        return json.dumps(
            masked_payload(notification.payload), indent=2, ensure_ascii=False
        )

    @admin.action(description="Retry now (failed or pending)", permissions=["change"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.filter(
            state__in=[Notification.State.FAILED, Notification.State.PENDING]
        ).update(
            state=Notification.State.PENDING,
            next_attempt_at=timezone.now(),
            claimed_until=None,
        )
        self.message_user(request, f"{count} notification(s) queued again.")
