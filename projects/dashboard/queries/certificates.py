"""Certificates expiring soon: the open certificate incidents."""

from __future__ import annotations

from django.db.models import QuerySet

from projects.models import Incident, Team
from projects.teams.scoping import for_team

CERTIFICATES_SHOWN = 20


def expiring_certificates(team: Team | None) -> QuerySet[Incident]:
    """The team's open certificate incidents, soonest expiry first: each is a
    certificate within its project's warning period (or expired)."""
    return (
        for_team(Incident.objects.all(), team)
        .filter(kind=Incident.Kind.CERTIFICATE, resolved_at=None)
        .select_related("project")
        .order_by("certificate_expires_at")[:CERTIFICATES_SHOWN]
    )
