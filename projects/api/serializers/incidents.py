from __future__ import annotations

from rest_framework import serializers

from projects.models import Incident


class IncidentSerializer(serializers.ModelSerializer):
    project_name = serializers.CharField(source="project.name", read_only=True)
    is_open = serializers.SerializerMethodField()

    class Meta:
        model = Incident
        fields = [
            "id",
            "project",
            "project_name",
            "kind",
            "is_open",
            "started_at",
            "confirmed_at",
            "resolved_at",
            "acknowledged_at",
            "first_error",
            "last_error",
            "failed_polls",
            "certificate_expires_at",
        ]
        read_only_fields = fields

    def get_is_open(self, incident: Incident) -> bool:
        return incident.resolved_at is None
