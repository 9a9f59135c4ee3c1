"""The channel form: per-kind validation as field errors, and the URL and
secret never sent back to the browser."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from projects.checks.blocked_targets import apprise_blocked_problem, blocked_url_problem
from projects.checks.validators import validate_http_url
from projects.models import NotificationChannel, Team
from projects.notifications.masking import masked_secret, masked_url
from projects.notifications.signing import new_secret, secret_key
from projects.notifications.transports.apprise import is_http_service, is_understood
from projects.notifications.transports.email import recipients
from projects.teams.forms import TeamValidatedForm

MAX_REMINDER_MINUTES = 7 * 24 * 60
MIN_REMINDER_MINUTES = 5
KEEP = "Leave empty to keep the current value ({current})."


class ChannelForm(TeamValidatedForm):
    url = forms.CharField(
        label="URL",
        required=False,
        max_length=2000,
        widget=forms.PasswordInput(attrs={"size": 80, "autocomplete": "off"}),
        help_text="Webhook: the http(s) URL to POST to. E-mail: addresses, "
        "comma-separated. Apprise: any Apprise URL, e.g. ntfy://ntfy.sh/topic.",
    )
    secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput(attrs={"size": 60, "autocomplete": "off"}),
        help_text="Webhooks only: a Standard Webhooks secret (whsec_…). "
        "Left empty on a new webhook, one is generated and shown once.",
    )

    class Meta:
        model = NotificationChannel
        fields = [
            "name",
            "kind",
            "url",
            "secret",
            "enabled",
            "is_default",
            "send_resolved",
            "reminder_minutes",
        ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.stored_url = self.instance.url
        self.stored_secret = self.instance.secret
        self.generated_secret = ""
        if self.stored_url:
            current = masked_url(self.instance.kind, self.stored_url)
            self.fields["url"].help_text = KEEP.format(current=current)
        if self.stored_secret:
            current = masked_secret(self.stored_secret)
            self.fields["secret"].help_text = KEEP.format(current=current)

    def clean_url(self) -> str:
        return self.cleaned_data["url"].strip() or self.stored_url

    def clean_secret(self) -> str:
        return self.cleaned_data["secret"].strip() or self.stored_secret

    def clean_reminder_minutes(self) -> int:
        minutes = self.cleaned_data["reminder_minutes"]
        if minutes and not MIN_REMINDER_MINUTES <= minutes <= MAX_REMINDER_MINUTES:
            raise ValidationError(
                f"Reminders go out every {MIN_REMINDER_MINUTES} minutes at the "
                f"most and every {MAX_REMINDER_MINUTES:,} (a week) at the least; "
                "0 sends none."
            )
        return minutes

    def clean(self) -> dict:
        cleaned = super().clean()
        kind, url = cleaned.get("kind"), cleaned.get("url")
        if not url:
            self.add_error("url", "This field is required.")
        elif kind:
            self._check_url(kind, url)
            if not self.has_error("url") and (problem := self._blocked(kind, url)):
                self.add_error("url", problem)
        if kind:
            self._check_secret(kind, cleaned)
        return cleaned

    def _check_url(self, kind: str, url: str) -> None:
        checks = {
            NotificationChannel.Kind.WEBHOOK: _check_webhook_url,
            NotificationChannel.Kind.EMAIL: _check_addresses,
            NotificationChannel.Kind.APPRISE: _check_apprise_url,
        }
        try:
            checks[kind](url)
        except ValidationError as error:
            self.add_error("url", error)

    def _blocked(self, kind: str, url: str) -> str:
        """The save-time half of the blocked-networks guard for a team that
        is not trusted (the send-time half: outbound_guard.py): an address
        written in the URL, and Apprise services that do not send over HTTP."""
        if kind == NotificationChannel.Kind.EMAIL or not settings.POLL_BLOCKED_NETWORKS:
            return ""
        if Team.objects.filter(pk=self.instance.team_id, trusted=True).exists():
            return ""
        if kind == NotificationChannel.Kind.APPRISE:
            if not is_http_service(url):
                return (
                    "This team's Apprise channels may use only services that "
                    "send over HTTP (POLL_BLOCKED_NETWORKS); ask a superuser to "
                    "trust the team."
                )
            return apprise_blocked_problem(url)
        return blocked_url_problem(url)

    def _check_secret(self, kind: str, cleaned: dict) -> None:
        secret = cleaned.get("secret", "")
        if kind != NotificationChannel.Kind.WEBHOOK:
            cleaned["secret"] = ""  # a secret only signs webhooks
            return
        if not secret:
            cleaned["secret"] = self.generated_secret = new_secret()
            return
        try:
            secret_key(secret)
        except ValueError as error:
            self.add_error("secret", str(error))


def _check_webhook_url(url: str) -> None:
    if not url.lower().startswith(("http://", "https://")):
        raise ValidationError("A webhook URL starts with http:// or https://.")
    validate_http_url(url)


def _check_addresses(url: str) -> None:
    addresses = recipients(url)
    if not addresses:
        raise ValidationError("Enter at least one e-mail address.")
    for address in addresses:
        try:
            validate_email(address)
        except ValidationError:
            raise ValidationError(
                "“%(address)s” is not a valid e-mail address.",
                params={"address": address},
            ) from None


def _check_apprise_url(url: str) -> None:
    if not is_understood(url):
        raise ValidationError(
            "Apprise does not understand this URL; see the Apprise wiki for "
            "each service's URL format (e.g. ntfy://ntfy.sh/topic)."
        )
