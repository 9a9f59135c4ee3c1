"""The objectives pages: the team's objectives with their numbers now, and
one objective with its alerts (docs/objectives.md has the formulas)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from projects.dashboard.banners import monitor_banners
from projects.dashboard.queries.objectives import objective_rows, team_objectives
from projects.objectives.alerts import RULES
from projects.objectives.status import objective_status
from projects.teams.scoping import current_team

ALERTS_SHOWN = 20


def _objectives(request: HttpRequest):
    return team_objectives(current_team(request))


@login_required
def objective_list(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    rows = objective_rows(current_team(request), now)
    context = {"rows": rows, "now": now, "banners": monitor_banners(now)}
    return render(request, "projects/objectives.html", context)


@login_required
def objective_detail(request: HttpRequest, pk: int) -> HttpResponse:
    objective = get_object_or_404(_objectives(request), pk=pk)
    now = timezone.now()
    context = {
        "objective": objective,
        "status": objective_status(objective, now),
        "rules": RULES,
        "alerts": objective.alerts.order_by("-started_at")[:ALERTS_SHOWN],
        "now": now,
        "banners": monitor_banners(now),
    }
    return render(request, "projects/objective_detail.html", context)
