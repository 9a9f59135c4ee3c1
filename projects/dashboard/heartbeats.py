"""A heartbeat project's page: it is pinged rather than polled, so it
shows what a pinger needs (the full ping URL with copy-paste curl lines,
the schedule and grace, when the next ping is due) and the recent pings
with their messages; no response-time chart and no DNS/TLS phases, which
a ping has none of."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from projects.dashboard.banners import monitor_banners
from projects.dashboard.params import positive_int
from projects.dashboard.queries.deliveries import DELIVERIES_SHOWN, recent_deliveries
from projects.dashboard.queries.history import poll_history
from projects.dashboard.queries.incidents import project_incidents
from projects.dashboard.queries.ranges import DEFAULT_RANGE, RANGES
from projects.dashboard.queries.uptime import uptime_by_project
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import Project, Team

# The curl lines: fail on an HTTP error, quiet unless it fails, a bound
# on the time, and retries, so a blip does not read as a missed ping.
CURL = "curl -fsS -m 10 --retry 5"


def heartbeat_detail(
    request: HttpRequest,
    project: Project,
    *,
    now: datetime,
    maintenance: MaintenanceSchedule,
    team: Team | None,
) -> HttpResponse:
    pk = project.pk
    time_range = RANGES.get(request.GET.get("range", ""), DEFAULT_RANGE)
    # Pings are sparse: a day's (or the range asked for) reads best.
    uptimes = uptime_by_project([pk], RANGES.values(), now, maintenance=maintenance)
    before = positive_int(request.GET, "before")
    pings, next_before = poll_history(
        pk, since=time_range.start(now), status="", before=before
    )
    ping_url = request.build_absolute_uri(
        reverse("pings:ping", args=[project.ping_key])
    )
    fail_url = request.build_absolute_uri(
        reverse("pings:fail", args=[project.ping_key])
    )
    context = {
        "project": project,
        "range": time_range,
        "ranges": RANGES.values(),
        "uptimes": [(r, uptimes[pk][r.key]) for r in RANGES.values()],
        "pings": pings,
        "before": before,
        "next_before": next_before,
        "ping_url": ping_url,
        "fail_url": fail_url,
        "curl_success": f"{CURL} {ping_url}",
        "curl_failure": f'{CURL} --data-raw "what went wrong" {fail_url}',
        "due": project.ping_deadline,
        "late": project.ping_deadline is not None and project.ping_deadline < now,
        "now": now,
        "deliveries": recent_deliveries(pk),
        "deliveries_shown": DELIVERIES_SHOWN,
        "incidents": project_incidents(pk, team=team),
        "banners": monitor_banners(now),
    }
    return render(request, "projects/heartbeat_detail.html", context)
