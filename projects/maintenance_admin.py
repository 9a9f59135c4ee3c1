"""Maintenance windows in the admin: one-off or weekly, for chosen
projects or all, with each mistake reported on the field it concerns."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils import timezone

from projects.models import MaintenanceWindow
from projects.models.maintenance import WEEKDAYS
from projects.teams.admin_scoping import TeamScopedAdmin

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


@admin.register(MaintenanceWindow)
class MaintenanceWindowAdmin(TeamScopedAdmin):
    form = MaintenanceWindowForm
    list_display = ["name", "schedule_display", "scope", "enabled", "active_now"]
    list_filter = ["enabled", "repeat", "all_projects"]
    search_fields = ["name"]
    # A select of every project would be thousands of options.
    autocomplete_fields = ["projects"]
    fieldsets = [
        (None, {"fields": ["name", "enabled"]}),
        (
            "When",
            {
                "description": "Once: a start and an end. Every week: the days, "
                "the start and end time, and the time zone they are in.",
                "fields": [
                    "repeat",
                    ("starts_at", "ends_at"),
                    "weekdays",
                    ("start_time", "end_time"),
                    "time_zone",
                ],
            },
        ),
        (
            "Which projects",
            {
                "description": "Polls go on and are stored; no incident opens "
                "and nothing is sent while the window is active.",
                "fields": ["all_projects", "projects"],
            },
        ),
    ]

    @admin.display(description="when")
    def schedule_display(self, window: MaintenanceWindow) -> str:
        return window.schedule_display

    @admin.display(description="projects")
    def scope(self, window: MaintenanceWindow) -> str:
        if window.all_projects:
            return "all"
        return str(window.projects.count())

    @admin.display(description="active now", boolean=True)
    def active_now(self, window: MaintenanceWindow) -> bool:
        return window.enabled and window.is_active(timezone.now())
