from __future__ import annotations

from rest_framework import serializers

from django.db import models

from projects.api.serializers.fields import LocalTimeField, RelatedIdsField
from projects.api.serializers.forms import FormBackedSerializer
from projects.forms.maintenance import MaintenanceWindowForm
from projects.models import MaintenanceWindow


class MaintenanceWindowSerializer(FormBackedSerializer):
    form_class = MaintenanceWindowForm
    serializer_field_mapping = {
        **FormBackedSerializer.serializer_field_mapping,
        models.TimeField: LocalTimeField,
    }

    weekdays = serializers.ListField(
        child=serializers.IntegerField(
            error_messages={"invalid": "Enter a whole number."}
        ),
        required=False,
        help_text="Weekly only: the days a window starts on, 0 (Monday) to 6.",
    )
    projects = RelatedIdsField(required=False, help_text="Project ids.")

    class Meta:
        model = MaintenanceWindow
        fields = ["id", *MaintenanceWindowForm.Meta.fields, "created_at"]
        read_only_fields = ["id", "created_at"]
