"""The --team option the commands share: a team's slug, or the install's
first team when left out."""

from __future__ import annotations

from django.core.management.base import CommandError

from projects.models import Team
from projects.models.teams import default_team

TEAM_HELP = "the team's slug (default: the install's first team)"


def team_from_option(slug: str | None) -> Team:
    if not slug:
        return default_team()
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        known = ", ".join(Team.objects.values_list("slug", flat=True)) or "none"
        raise CommandError(f"No team with the slug {slug!r} (teams: {known}).")
    return team
