"""A team's objectives with their numbers now, for the objectives page and
the overview."""

from __future__ import annotations

from datetime import datetime

from projects.models import ServiceLevelObjective, Team
from projects.objectives.status import ObjectiveStatus, objective_status
from projects.teams.scoping import for_team


def team_objectives(team: Team | None):
    objectives = ServiceLevelObjective.objects.select_related(
        "project", "tag", "section__page"
    )
    return for_team(objectives, team)


def objective_rows(
    team: Team | None, now: datetime
) -> list[tuple[ServiceLevelObjective, ObjectiveStatus]]:
    """Each objective with its status, the least budget left first: the
    ones closest to missing lead the list."""
    rows = [(o, objective_status(o, now)) for o in team_objectives(team)]
    rows.sort(key=lambda row: (row[1].error_budget_remaining_percent, row[0].name))
    return rows
