"""The delivery log of one project: its notifications' attempts, digests
that covered its events included."""

from __future__ import annotations

from django.db.models import Q

from projects.models import DeliveryAttempt

DELIVERIES_SHOWN = 20


def recent_deliveries(project_id: int, *, limit: int = DELIVERIES_SHOWN) -> list:
    """The latest attempts, newest first, with their notification and
    channel at hand."""
    about_project = Q(notification__project_id=project_id) | Q(
        notification__covered__project_id=project_id
    )
    return list(
        DeliveryAttempt.objects.filter(about_project)
        .select_related("notification__channel")
        .distinct()
        .order_by("-attempted_at", "-id")[:limit]
    )
