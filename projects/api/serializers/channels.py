"""Notification channels: the URL and the secret can be written, never read
back; the destination is shown masked, as the admin shows it."""

from __future__ import annotations

from rest_framework import serializers

from projects.api.serializers.forms import FormBackedSerializer
from projects.api.serializers.projects import may_read_secrets
from projects.models import NotificationChannel
from projects.notifications.forms import ChannelForm
from projects.notifications.masking import masked_email, masked_secret, masked_url


class ChannelSerializer(FormBackedSerializer):
    form_class = ChannelForm

    destination = serializers.SerializerMethodField(
        help_text="The URL with its secret parts masked, as the admin shows it."
    )
    secret_hint = serializers.SerializerMethodField(
        help_text="The signing secret's first characters; empty when none."
    )

    class Meta:
        model = NotificationChannel
        fields = [
            "id",
            *ChannelForm.Meta.fields,
            "destination",
            "secret_hint",
            "failing_since",
            "last_error",
            "created_at",
        ]
        read_only_fields = ["id", "failing_since", "last_error", "created_at"]
        extra_kwargs = {
            "url": {
                "write_only": True,
                "help_text": "Webhook URL, e-mail addresses or Apprise URL. "
                "Never shown again; left out on a change, it is kept.",
            },
            "secret": {
                "write_only": True,
                "help_text": "Webhooks: the Standard Webhooks secret (whsec_…). "
                "Left out on a new webhook, one is generated and returned once "
                "as generated_secret.",
            },
        }

    def get_destination(self, channel: NotificationChannel) -> str:
        """A subscriber's address is not for read keys (S4-10)."""
        shown = masked_url(channel.kind, channel.url)
        of_subscriber = getattr(channel, "subscriber", None) is not None
        if of_subscriber and not may_read_secrets(self.context.get("request")):
            return masked_email(shown) if channel.kind == "email" else shown
        return shown

    def get_secret_hint(self, channel: NotificationChannel) -> str:
        return masked_secret(channel.secret)

    @property
    def generated_secret(self) -> str:
        """The secret the form made for a new webhook, to show this once."""
        form = getattr(self, "_form", None)
        return form.generated_secret if form is not None else ""
