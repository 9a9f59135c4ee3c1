"""Certificates and domain registrations expiring soon: the open
certificate and domain incidents, in one query."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.functions import Coalesce

from projects.models import Incident, Team
from projects.teams.scoping import for_team

CERTIFICATES_SHOWN = 20
KINDS = (Incident.Kind.CERTIFICATE, Incident.Kind.DOMAIN)


@dataclass(frozen=True)
class Expiring:
    certificates: list[Incident]
    domains: list[Incident]


def expiring_soon(team: Team | None) -> Expiring:
    """The team's open certificate and domain incidents, soonest expiry
    first: each is within its project's warning period (or expired)."""
    incidents = list(
        for_team(Incident.objects.all(), team)
        .filter(kind__in=KINDS, resolved_at=None)
        .select_related("project")
        .order_by(Coalesce("certificate_expires_at", "domain_expires_at"))[
            : CERTIFICATES_SHOWN * len(KINDS)
        ]
    )
    return Expiring(
        certificates=_of_kind(incidents, Incident.Kind.CERTIFICATE),
        domains=_of_kind(incidents, Incident.Kind.DOMAIN),
    )


def _of_kind(incidents: list[Incident], kind: str) -> list[Incident]:
    return [i for i in incidents if i.kind == kind][:CERTIFICATES_SHOWN]
