"""The header's team switcher: shown only to someone with several teams,
so a one-team install never sees a picker. Lazy: a page that draws no
header asks nothing."""

from __future__ import annotations

from django.http import HttpRequest

from projects.models import Role
from projects.teams.scoping import current_team, may, teams_of


def teams(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def team_choices() -> list:
        choices = list(teams_of(user))
        return choices if len(choices) > 1 else []

    return {
        "current_team": lambda: current_team(request),
        "team_choices": team_choices,
        "may_invite": lambda: may(request, Role.MANAGER),
        "may_edit": lambda: may(request, Role.EDITOR),
    }
