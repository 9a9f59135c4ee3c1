"""objectives/: service level objectives, through the admin's form."""

from __future__ import annotations

from projects.api.serializers.objectives import ObjectiveSerializer
from projects.api.teams import scoped
from projects.api.views.catalog import AuditedCrud
from projects.models import ServiceLevelObjective


class ObjectiveViewSet(AuditedCrud):
    """Objectives with their attainment, error budget and burn rate now."""

    serializer_class = ObjectiveSerializer

    def get_queryset(self):
        objectives = ServiceLevelObjective.objects.prefetch_related("channels")
        return scoped(self.request, objectives.order_by("name", "id"))
