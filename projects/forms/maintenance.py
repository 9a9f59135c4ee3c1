"""The rules of a maintenance window, shared by the admin, the API and the
YAML import: one-off or weekly, for chosen projects or all, with each
mistake reported on the field it concerns."""

from __future__ import annotations

from django import forms

from projects.models import MaintenanceWindow
from projects.models.maintenance import WEEKDAYS

ONCE_FIELDS = ("starts_at", "ends_at")
WEEKLY_FIELDS = ("weekdays", "start_time", "end_time")


class MaintenanceWindowForm(forms.ModelForm):
    weekdays = forms.TypedMultipleChoiceField(
        choices=list(enumerate(WEEKDAYS)),
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Weekly only: the days the window starts on.",
    )

    class Meta:
        model = MaintenanceWindow
        fields = [
            "name",
            "enabled",
            "repeat",
            "starts_at",
            "ends_at",
            "weekdays",
            "start_time",
            "end_time",
            "time_zone",
            "all_projects",
            "projects",
        ]

    def clean(self) -> dict:
        cleaned = super().clean()
        if not cleaned.get("all_projects") and not cleaned.get("projects"):
            self.add_error("projects", "Choose the projects, or tick “All projects”.")
        # The other kind's fields would only confuse whoever reads it later.
        unused = WEEKLY_FIELDS if cleaned.get("repeat") == "once" else ONCE_FIELDS
        for field in unused:
            cleaned[field] = [] if field == "weekdays" else None
        return cleaned
