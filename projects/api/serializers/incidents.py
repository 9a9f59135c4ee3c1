from __future__ import annotations

from rest_framework import serializers

from projects.models import Incident


class IncidentSerializer(serializers.ModelSerializer):
    project_name = serializers.CharField(source="project.name", read_only=True)
    is_open = serializers.SerializerMethodField()
    acknowledged_by = serializers.SerializerMethodField(
        help_text="Who acknowledged it: a user's name or an API key's name; "
        "null when nobody has, or it was through the link in a message."
    )

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
            "acknowledged_by",
            "first_error",
            "last_error",
            "failed_polls",
            "certificate_expires_at",
            "domain",
            "domain_expires_at",
        ]
        read_only_fields = fields

    def get_is_open(self, incident: Incident) -> bool:
        return incident.resolved_at is None

    def get_acknowledged_by(self, incident: Incident) -> str | None:
        if incident.acknowledged_by is not None:
            return incident.acknowledged_by.get_username()
        if incident.acknowledged_by_key is not None:
            return incident.acknowledged_by_key.name
        return None
