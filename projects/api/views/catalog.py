"""maintenance-windows/ and tags/: plain CRUD through the admin's forms."""

from __future__ import annotations

from rest_framework import viewsets

from django.db.models import Prefetch

from projects.api.serializers.maintenance import MaintenanceWindowSerializer
from projects.api.serializers.tags import TagSerializer
from projects.api.teams import Audited, scoped
from projects.models import MaintenanceWindow, Project, Tag


class AuditedCrud(Audited, viewsets.ModelViewSet):
    """Creates and changes go to the audit log; the key's team only."""

    lookup_value_regex = "[0-9]+"

    def perform_create(self, serializer) -> None:
        self.save_audited(None, serializer.save)

    def perform_update(self, serializer) -> None:
        self.save_audited(serializer.instance, serializer.save)


class MaintenanceWindowViewSet(AuditedCrud):
    serializer_class = MaintenanceWindowSerializer

    def get_queryset(self):
        windows = MaintenanceWindow.objects.prefetch_related(
            Prefetch("projects", queryset=Project.objects.only("pk"))
        ).order_by("name", "id")
        return scoped(self.request, windows)


class TagViewSet(AuditedCrud):
    serializer_class = TagSerializer

    def get_queryset(self):
        return scoped(self.request, Tag.objects.order_by("name"))
