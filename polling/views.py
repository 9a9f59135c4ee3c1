from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from polling.client import ControlClient
from polling.engine.status import PollerStatus
from polling.fleet_status import NodeView, node_views, region_views
from polling.health import Reading, readings
from polling.team_numbers import team_numbers
from projects.housekeeping.runs import latest_runs
from projects.models import Agent
from projects.teams.scoping import current_team


@dataclass(frozen=True, slots=True)
class Panel:
    """One running poller's health and numbers on the page."""

    name: str
    status: PollerStatus
    readings: list[Reading]


@login_required
def poller(request: HttpRequest) -> HttpResponse:
    """Each running poller's status, or a plain note that none is running:
    install-wide numbers, host names and process ids, for superusers. A
    team member sees their team's numbers only."""
    team = current_team(request)
    if not request.user.is_superuser and team is None:
        raise PermissionDenied
    if not request.user.is_superuser:
        context = {"numbers": team_numbers(team), "agents": _agents(request)}
        return render(request, "polling/poller_team.html", context)
    nodes = node_views()
    context = {
        "panels": _panels(nodes),
        "control_url": settings.POLLER_CONTROL_URL,
        "housekeeping": latest_runs(),
        "nodes": nodes,
        "regions": region_views(),
        "agents": _agents(request),
    }
    return render(request, "polling/poller.html", context)


def _agents(request: HttpRequest) -> list[Agent]:
    """Every agent for a superuser; a member sees its team's agents."""
    agents = Agent.objects.select_related("region").order_by("region__name", "name")
    if request.user.is_superuser:
        return list(agents)
    return list(agents.filter(team=current_team(request)))


def _panels(nodes: list[NodeView]) -> list[Panel]:
    """The live pollers' statuses, as their nodes reported them; the one
    at POLLER_CONTROL_URL when no node has (a poller that registered no
    control URL)."""
    panels = [
        Panel(node.name, node.status, readings(node.status))
        for node in nodes
        if node.status is not None
    ]
    if not panels and (status := ControlClient().status()):
        panels = [Panel("", status, readings(status))]
    return panels
