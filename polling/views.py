from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from polling.client import ControlClient
from polling.fleet_status import node_views
from polling.health import readings
from projects.housekeeping.runs import latest_runs


@login_required
def poller(request: HttpRequest) -> HttpResponse:
    """The running poller's status, or a plain note that it is not running."""
    status = ControlClient().status()
    context = {
        "status": status,
        "readings": readings(status) if status else [],
        "control_url": settings.POLLER_CONTROL_URL,
        "housekeeping": latest_runs(),
        "nodes": node_views(),
    }
    return render(request, "polling/poller.html", context)
