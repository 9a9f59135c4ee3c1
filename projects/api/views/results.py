"""projects/{id}/results/ and projects/{id}/uptime/."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from django.shortcuts import get_object_or_404
from django.utils import timezone

from projects.api.pagination import NewestFirstCursor
from projects.api.queries import mean_response_ms
from projects.api.serializers.results import PollResultSerializer, UptimeSerializer
from projects.api.teams import scoped
from projects.api.views import params
from projects.dashboard.queries.ranges import RANGES
from projects.dashboard.queries.uptime import uptime_by_project
from projects.latency.ranges import range_sums
from projects.models import PollResult, Project, Status

UPTIME_RANGES = ("24h", "7d", "30d", "90d", "1y")


@extend_schema(
    parameters=[
        OpenApiParameter("since", str, description="ISO 8601; polls at or after."),
        OpenApiParameter("until", str, description="ISO 8601; polls before."),
        OpenApiParameter("status", str, enum=Status.values),
    ]
)
class ResultList(generics.ListAPIView):
    """A project's polls, newest first, with the time each phase took."""

    serializer_class = PollResultSerializer
    pagination_class = NewestFirstCursor

    def get_queryset(self):
        projects = scoped(self.request, Project.objects.only("pk"))
        project = get_object_or_404(projects, pk=self.kwargs["pk"])
        polls = PollResult.objects.filter(project_id=project.pk)
        if since := params.moment(self.request, "since"):
            polls = polls.filter(polled_at__gte=since)
        if until := params.moment(self.request, "until"):
            polls = polls.filter(polled_at__lt=until)
        if status := params.choice(self.request, "status", Status.values):
            polls = polls.filter(status=status)
        return polls


class UptimeView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("range", str, enum=UPTIME_RANGES, default="24h"),
        ],
        responses=UptimeSerializer,
    )
    def get(self, request: Request, pk: int) -> Response:
        """Uptime, polls, failures, mean response time and the p50, p90,
        p95 and p99 response times over a range, counted as the dashboard
        counts them."""
        key = params.text(request, "range") or "24h"
        if key not in UPTIME_RANGES:
            raise ValidationError(
                {"range": [f"Use one of: {', '.join(UPTIME_RANGES)}."]}
            )
        projects = scoped(request, Project.objects.only("pk"))
        project = get_object_or_404(projects, pk=pk)
        time_range, now = RANGES[key], timezone.now()
        uptime = uptime_by_project([project.pk], [time_range], now)[project.pk][key]
        data = {
            "range": key,
            "start": time_range.start(now),
            "end": now,
            "uptime_percent": uptime.percent,
            "polls": uptime.polls,
            "failures": uptime.failures,
            "maintenance_polls": uptime.maintenance_polls,
            "mean_response_time_ms": mean_response_ms(project.pk, time_range, now),
            **range_sums([project.pk], time_range.start(now))[project.pk].percentiles(),
        }
        return Response(UptimeSerializer(data).data)
