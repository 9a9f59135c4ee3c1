"""incidents/: list and read, newest first; acknowledge (write keys)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from projects.api.serializers.incidents import IncidentSerializer
from projects.api.teams import api_actor, scoped
from projects.api.views import params
from projects.incidents.acknowledge import acknowledge
from projects.models import Incident

STATES = ("open", "resolved")


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("project", int, description="A project's id."),
            OpenApiParameter("state", str, enum=STATES),
            OpenApiParameter("kind", str, enum=Incident.Kind.values),
        ]
    )
)
class IncidentViewSet(viewsets.ReadOnlyModelViewSet):
    lookup_value_regex = "[0-9]+"
    serializer_class = IncidentSerializer

    def get_queryset(self):
        incidents = scoped(
            self.request,
            Incident.objects.select_related(
                "project", "acknowledged_by", "acknowledged_by_key"
            ).order_by("-started_at", "-id"),
        )
        if self.action != "list":
            return incidents
        if (project := params.identifier(self.request, "project")) is not None:
            incidents = incidents.filter(project_id=project)
        state = params.choice(self.request, "state", STATES)
        if state:
            incidents = incidents.filter(resolved_at__isnull=state == "open")
        if kind := params.choice(self.request, "kind", Incident.Kind.values):
            incidents = incidents.filter(kind=kind)
        return incidents

    @extend_schema(request=None, responses={200: IncidentSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str) -> Response:
        """Someone is on it: reminders stop and the channels told of the
        incident hear it was acknowledged, once. 409 when it is resolved or
        acknowledged already."""
        incident = self.get_object()
        acknowledged = acknowledge(
            incident.pk, key=request.auth, actor=api_actor(request)
        )
        if not acknowledged:
            return Response(
                {"detail": "The incident is resolved or acknowledged already."},
                status=status.HTTP_409_CONFLICT,
            )
        incident = self.get_queryset().get(pk=incident.pk)
        return Response(self.get_serializer(incident).data)
