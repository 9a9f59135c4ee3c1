"""Posting an update about an incident: the one rule set behind the
incident's admin page and the form on /incidents/."""

from __future__ import annotations

from django import forms
from django.db import transaction
from django.utils import timezone

from projects.models import Incident, StatusUpdate

MAX_MESSAGE_LENGTH = 10_000


class StatusUpdateForm(forms.ModelForm):
    message = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_MESSAGE_LENGTH,
        help_text="Markdown: **bold**, _italic_, [links](https://…), lists. "
        "HTML is shown as text.",
    )

    class Meta:
        model = StatusUpdate
        fields = ["status", "message"]


def post_update(update: StatusUpdate) -> StatusUpdate:
    """Saves an update; a "resolved" update to an open manual incident
    resolves it (downtime incidents end when their project is up again)."""
    with transaction.atomic():
        update.save()
        incident = update.incident
        if (
            update.status == StatusUpdate.Status.RESOLVED
            and incident.kind == Incident.Kind.MANUAL
            and incident.resolved_at is None
        ):
            Incident.objects.filter(pk=incident.pk, resolved_at__isnull=True).update(
                resolved_at=update.created_at or timezone.now(),
                updated_at=timezone.now(),
            )
    return update
