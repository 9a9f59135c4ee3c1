"""maintenance-windows/ and tags/: plain CRUD through the admin's forms."""

from __future__ import annotations

from rest_framework import viewsets

from django.db.models import Prefetch

from projects.api.serializers.maintenance import MaintenanceWindowSerializer
from projects.api.serializers.tags import TagSerializer
from projects.models import MaintenanceWindow, Project, Tag


class MaintenanceWindowViewSet(viewsets.ModelViewSet):
    lookup_value_regex = "[0-9]+"
    serializer_class = MaintenanceWindowSerializer
    queryset = MaintenanceWindow.objects.prefetch_related(
        Prefetch("projects", queryset=Project.objects.only("pk"))
    ).order_by("name", "id")


class TagViewSet(viewsets.ModelViewSet):
    lookup_value_regex = "[0-9]+"
    serializer_class = TagSerializer
    queryset = Tag.objects.order_by("name")
