"""objectives/: an objective as its form edits it, with its numbers now
(projects/objectives/status.py; docs/objectives.md has the formulas)."""

from __future__ import annotations

from rest_framework import serializers

from django.utils import timezone

from projects.api.serializers.forms import FormBackedSerializer
from projects.forms.objective import ObjectiveForm
from projects.models import ServiceLevelObjective
from projects.objectives.status import objective_status

COMPUTED = [
    "attainment_percent",
    "error_budget_remaining_percent",
    "error_budget_minutes",
    "error_budget_remaining_minutes",
    "burn_rate_1h",
    "budget_exhausted_at",
    "window_start",
]


class ObjectiveSerializer(FormBackedSerializer):
    form_class = ObjectiveForm

    attainment_percent = serializers.FloatField(
        read_only=True, allow_null=True, help_text="Good polls out of counted ones."
    )
    error_budget_remaining_percent = serializers.FloatField(
        read_only=True, help_text="Below 0 once the budget is spent."
    )
    error_budget_minutes = serializers.FloatField(
        read_only=True, help_text="The whole budget in minutes of full outage."
    )
    error_budget_remaining_minutes = serializers.FloatField(read_only=True)
    burn_rate_1h = serializers.FloatField(
        read_only=True,
        allow_null=True,
        help_text="The last hour's bad share over the budget share.",
    )
    budget_exhausted_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the budget runs out at the last hour's rate; null "
        "when nothing burns.",
    )
    window_start = serializers.DateTimeField(read_only=True)

    class Meta:
        model = ServiceLevelObjective
        fields = ["id", *ObjectiveForm.Meta.fields, *COMPUTED]
        read_only_fields = ["id"]

    def to_representation(self, objective: ServiceLevelObjective) -> dict:
        status = objective_status(objective, timezone.now())
        for name in COMPUTED:
            setattr(objective, name, getattr(status, name))
        return super().to_representation(objective)
