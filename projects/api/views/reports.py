"""reports/: a range's uptime, downtime, incidents, MTTR, MTBF, p95 and
objectives' attainment, as JSON or (?format=csv) as CSV."""

from __future__ import annotations

import csv
import io

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from django.shortcuts import get_object_or_404
from django.utils import timezone

from projects.api.teams import scoped
from projects.api.views import params
from projects.models import Project, Tag
from projects.reports.summary import build_report, last_calendar_month

CSV_COLUMNS = ["project", "started_at", "resolved_at", "duration_seconds"]


class CsvRenderer(BaseRenderer):
    """The report's summary as `# name,value` lines, then its incidents as
    a table: one file a spreadsheet opens."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        out = io.StringIO()
        writer = csv.writer(out)
        if "incidents" not in data:  # an error: its fields as rows
            for name, value in data.items():
                writer.writerow([name, value])
            return out.getvalue()
        for name, value in data.items():
            if name not in ("incidents", "objectives"):
                writer.writerow([f"# {name}", value])
        for objective in data["objectives"]:
            writer.writerow(
                [f"# objective {objective['name']}", objective["attainment_percent"]]
            )
        writer.writerow(CSV_COLUMNS)
        for line in data["incidents"]:
            writer.writerow([line[c] for c in CSV_COLUMNS])
        return out.getvalue()


class ReportView(APIView):
    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(
        # Built by hand, not from a model: an object (docs/objectives.md).
        responses={200: OpenApiTypes.OBJECT},
        parameters=[
            OpenApiParameter("project", int, description="One project's id."),
            OpenApiParameter("tag", str, description="The projects of a tag."),
            OpenApiParameter(
                "start",
                str,
                description="ISO 8601; default: the first of last month (UTC).",
            ),
            OpenApiParameter(
                "end",
                str,
                description="ISO 8601, excluded; default: the first of this month.",
            ),
        ],
    )
    def get(self, request: Request) -> Response:
        """The team's projects (or one project, or a tag's) over a range."""
        projects = scoped(request, Project.objects.only("pk"))
        if (project_id := params.identifier(request, "project")) is not None:
            projects = [get_object_or_404(projects, pk=project_id)]
        elif tag_name := params.text(request, "tag"):
            tag = get_object_or_404(scoped(request, Tag.objects.all()), name=tag_name)
            projects = projects.filter(tags=tag)
        start, end = last_calendar_month(timezone.now())
        start = params.moment(request, "start") or start
        end = params.moment(request, "end") or end
        if end <= start:
            raise ValidationError({"end": ["End after the start."]})
        report = build_report([p.pk for p in projects], start, end)
        return Response(_as_data(report))


def _as_data(report) -> dict:
    return {
        "start": report.start.isoformat(),
        "end": report.end.isoformat(),
        "projects": report.projects,
        "polls": report.polls,
        "failures": report.failures,
        "uptime_percent": report.uptime_percent,
        "downtime_minutes": round(report.downtime_minutes, 3),
        "incident_count": len(report.incidents),
        "mttr_seconds": report.mttr_seconds,
        "mtbf_seconds": report.mtbf_seconds,
        "p95_ms": report.p95_ms,
        "objectives": report.objectives,
        "incidents": [
            {
                "project": line.project,
                "started_at": line.started_at.isoformat(),
                "resolved_at": line.resolved_at and line.resolved_at.isoformat(),
                "duration_seconds": line.duration_seconds,
            }
            for line in report.incidents
        ],
    }
