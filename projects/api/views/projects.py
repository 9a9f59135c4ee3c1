"""projects/: list, create, read, change, delete, pause and resume, and the
upsert by name. A save goes through the admin's form and model, so the
post_save signal tells the running pollers, exactly as an admin save does."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from django.db import IntegrityError, transaction
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from projects.api.serializers.projects import ProjectSerializer
from projects.api.teams import Audited, api_actor, scoped
from projects.api.views import params
from projects.dashboard.queries.overview import (
    State,
    display_state_of,
    with_state,
)
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import NotificationChannel, Project, Region, Tag
from projects.teams.audit import record, snapshot

LIST_FILTERS = [
    OpenApiParameter("tag", str, description="Projects with this tag (its name)."),
    OpenApiParameter("state", str, enum=State.values),
    OpenApiParameter("kind", str, enum=Project.Kind.values),
    OpenApiParameter("enabled", bool),
    OpenApiParameter("search", str, description="Part of the name or URL."),
]


def projects_with_state() -> QuerySet[Project]:
    """Every project with its display state and, prefetched, its tags,
    channel ids, regions and flow steps: a page costs the same queries for
    10 projects or 500."""
    return _with_display_state(Project.objects.all()).prefetch_related(
        # Lists, not managers: building a related manager per project cost
        # a tenth of a page of 100.
        Prefetch("tags", queryset=Tag.objects.only("pk", "name"), to_attr="tag_list"),
        Prefetch(
            "channels",
            queryset=NotificationChannel.objects.only("pk"),
            to_attr="channel_list",
        ),
        Prefetch(
            "regions", queryset=Region.objects.only("pk", "name"), to_attr="region_list"
        ),
        "flow_steps",
    )


def _with_display_state(projects: QuerySet[Project]) -> QuerySet[Project]:
    return with_state(projects, maintained=_maintained())


def _maintained():
    now = timezone.now()
    return MaintenanceSchedule.load(now, now).covered_projects(now)


def add_display_state(project: Project) -> Project:
    """A project just saved, as the list shows it, from the project in
    hand and the maintenance windows: not read back."""
    project.display_state = display_state_of(project, maintained=_maintained())
    return project


@extend_schema_view(list=extend_schema(parameters=LIST_FILTERS))
class ProjectViewSet(Audited, viewsets.ModelViewSet):
    lookup_value_regex = "[0-9]+"
    serializer_class = ProjectSerializer

    def get_queryset(self) -> QuerySet[Project]:
        projects = scoped(self.request, projects_with_state())
        if self.action != "list":
            return projects
        return filtered(projects, self.request).order_by("name")

    def perform_create(self, serializer: ProjectSerializer) -> None:
        saved = self.save_audited(
            None, serializer.save, related=serializer.saved_related
        )
        add_display_state(saved)

    def perform_update(self, serializer: ProjectSerializer) -> None:
        saved = self.save_audited(
            serializer.instance, serializer.save, related=serializer.saved_related
        )
        add_display_state(saved)

    @extend_schema(request=None, responses=ProjectSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str) -> Response:
        """Stop polling the project (enabled: false), as the admin's
        "Disable" does; its history stays."""
        return self._set_enabled(enabled=False)

    @extend_schema(request=None, responses=ProjectSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str) -> Response:
        """Poll the project again; a heartbeat project waits interval +
        grace for its next ping."""
        return self._set_enabled(enabled=True)

    def _set_enabled(self, *, enabled: bool) -> Response:
        project = self.get_object()
        if project.enabled != enabled:
            before = snapshot(project)
            project.enabled = enabled
            fields = ["enabled", "updated_at"]
            if enabled and project.is_heartbeat:
                project.restart_heartbeat(timezone.now())
                fields.append("ping_deadline")
            with transaction.atomic():
                project.save(update_fields=fields)
                record(project, before, actor=api_actor(self.request))
        project = self.get_queryset().get(pk=project.pk)
        return Response(self.get_serializer(project).data)


def filtered(projects: QuerySet[Project], request: Request) -> QuerySet[Project]:
    if tag := params.text(request, "tag"):
        projects = projects.filter(tags__name=tag)
    if state := params.choice(request, "state", State.values):
        projects = projects.filter(display_state=state)
    if kind := params.choice(request, "kind", Project.Kind.values):
        projects = projects.filter(kind=kind)
    if (enabled := params.boolean(request, "enabled")) is not None:
        projects = projects.filter(enabled=enabled)
    if search := params.text(request, "search"):
        projects = projects.filter(Q(name__icontains=search) | Q(url__icontains=search))
    return projects


@extend_schema(
    request=ProjectSerializer,
    responses={200: ProjectSerializer, 201: ProjectSerializer},
    parameters=[OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH)],
)
class ProjectByNameView(Audited, viewsets.GenericViewSet):
    """PUT projects/by-name/{name}/: create (201) or change (200) the key's
    team's project of that name, so a script can run again without making
    duplicates. Names are unique per team: another team's project of the
    same name is neither seen nor changed."""

    serializer_class = ProjectSerializer

    def upsert(self, request: Request, name: str) -> Response:
        if "\x00" in name:
            raise ValidationError({"name": ["Null characters are not allowed."]})
        data = request.data
        if isinstance(data, dict):
            if data.get("name", name) != name:
                raise ValidationError(
                    {"name": ["The name in the body must be the one in the URL."]}
                )
            data = {**data, "name": name}
        project = scoped(request, Project.objects.filter(name=name)).first()
        serializer = self.get_serializer(project, data=data)
        serializer.is_valid(raise_exception=True)
        try:
            with transaction.atomic():
                saved = self.save_audited(
                    project, serializer.save, related=serializer.saved_related
                )
        except IntegrityError:
            # Another request made a project of this name meanwhile.
            return Response(
                {"detail": "The project was created meanwhile; send it again."},
                status=status.HTTP_409_CONFLICT,
            )
        add_display_state(saved)
        code = status.HTTP_200_OK if project else status.HTTP_201_CREATED
        return Response(self.get_serializer(saved).data, status=code)
