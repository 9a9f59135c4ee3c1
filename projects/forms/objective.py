"""The one form for an objective: the admin and the API share it (the
rules are the model's clean() and constraints)."""

from __future__ import annotations

from django import forms

from projects.models import ServiceLevelObjective
from projects.teams.forms import TeamValidatedForm

# `channels` hear every burn-rate rule; each other list one rule only.
CHANNEL_FIELDS = (
    "channels",
    "page_1h_channels",
    "page_6h_channels",
    "ticket_3d_channels",
)


class ObjectiveForm(TeamValidatedForm):
    class Meta:
        model = ServiceLevelObjective
        fields = [
            "name",
            "project",
            "tag",
            "section",
            "kind",
            "target_percent",
            "threshold_ms",
            "window_days",
            "calendar_month",
            "exclude_maintenance",
            *CHANNEL_FIELDS,
        ]
        widgets = dict.fromkeys(CHANNEL_FIELDS, forms.CheckboxSelectMultiple)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        team_id = self.instance.team_id
        # Only the objective's own team's projects, tags, sections and
        # channels.
        for name in ("project", "tag", *CHANNEL_FIELDS):
            field = self.fields.get(name)
            if field is not None and hasattr(field, "queryset"):
                field.queryset = field.queryset.filter(team_id=team_id)
        section = self.fields.get("section")
        if section is not None and hasattr(section, "queryset"):
            section.queryset = section.queryset.filter(
                page__team_id=team_id
            ).select_related("page")
            section.label_from_instance = lambda s: f"{s.page}: {s}"
