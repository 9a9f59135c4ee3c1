"""What a team member (not a superuser) sees on the poller page: their own
team's projects by state, counted from the rows the writer keeps on each
project (one aggregate query, whatever the team's size). Install-wide
totals, poller host names and process ids are for superusers only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q

from projects.models import Project, Team


@dataclass(frozen=True, slots=True)
class TeamNumbers:
    team: Team
    polled: int  # enabled projects the poller checks
    heartbeats: int  # enabled projects that wait for pings
    paused: int
    up: int
    pending: int
    down: int
    never_polled: int
    last_polled_at: datetime | None


def team_numbers(team: Team) -> TeamNumbers:
    enabled = Q(enabled=True)
    counted = Project.objects.filter(team=team).aggregate(
        polled=Count("pk", filter=enabled & Q(kind=Project.Kind.POLL)),
        heartbeats=Count("pk", filter=enabled & Q(kind=Project.Kind.HEARTBEAT)),
        paused=Count("pk", filter=Q(enabled=False)),
        up=Count("pk", filter=enabled & Q(state=Project.State.UP)),
        pending=Count("pk", filter=enabled & Q(state=Project.State.PENDING)),
        down=Count("pk", filter=enabled & Q(state=Project.State.DOWN)),
        never_polled=Count("pk", filter=enabled & Q(state="")),
        last_polled_at=Max("last_polled_at"),
    )
    return TeamNumbers(team=team, **counted)
