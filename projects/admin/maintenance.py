"""Maintenance windows in the admin: one-off or weekly, for chosen
projects or all (the rules are the form's, shared with the API and the
YAML import: projects/forms/maintenance.py)."""

from __future__ import annotations

from django.contrib import admin
from django.utils import timezone

from projects.admin.scoping import TeamScopedAdmin
from projects.forms.maintenance import MaintenanceWindowForm
from projects.models import MaintenanceWindow


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
