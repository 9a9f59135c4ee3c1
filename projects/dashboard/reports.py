"""The report page: the API's report (projects/reports/summary.py) for the
current team, a tag or a project, laid out to print."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.dateparse import parse_date

from projects.dashboard.params import positive_int
from projects.models import Project, Tag
from projects.models.results import utc_midnight
from projects.reports.summary import build_report, last_calendar_month
from projects.teams.scoping import current_team, for_team


@login_required
def report(request: HttpRequest) -> HttpResponse:
    team = current_team(request)
    projects = for_team(Project.objects.only("pk", "name"), team)
    subject = "all projects"
    if (project_id := positive_int(request.GET, "project")) is not None:
        project = get_object_or_404(projects, pk=project_id)
        projects, subject = [project], project.name
    elif tag_name := request.GET.get("tag", ""):
        tag = get_object_or_404(for_team(Tag.objects.all(), team), name=tag_name)
        projects, subject = projects.filter(tags=tag), f"tag {tag.name}"
    start, end = last_calendar_month(timezone.now())
    start = _day(request, "start") or start
    end = _day(request, "end") or end
    if end <= start:
        end = start
    context = {
        "report": build_report([p.pk for p in projects], start, end),
        "subject": subject,
        "query": request.GET.urlencode(),
    }
    return render(request, "projects/report.html", context)


def _day(request: HttpRequest, name: str) -> datetime | None:
    """A YYYY-MM-DD parameter as its UTC midnight; None if absent or bad."""
    try:
        day = parse_date(request.GET.get(name, ""))
    except ValueError:
        return None
    return None if day is None else utc_midnight(day)
