"""The one form for an objective: the admin and the API share it (the
rules are the model's clean() and constraints)."""

from __future__ import annotations

from django import forms

from projects.models import ServiceLevelObjective
from projects.teams.forms import TeamValidatedForm


class ObjectiveForm(TeamValidatedForm):
    class Meta:
        model = ServiceLevelObjective
        fields = [
            "name",
            "project",
            "tag",
            "kind",
            "target_percent",
            "threshold_ms",
            "window_days",
            "calendar_month",
            "exclude_maintenance",
            "channels",
        ]
        widgets = {"channels": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        team_id = self.instance.team_id
        # Only the objective's own team's projects, tags and channels.
        for name in ("project", "tag", "channels"):
            field = self.fields.get(name)
            if field is not None and hasattr(field, "queryset"):
                field.queryset = field.queryset.filter(team_id=team_id)
