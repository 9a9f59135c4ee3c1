"""Service level objectives in the admin: the form shared with the API
(projects/forms/objective.py), and each objective's numbers now."""

from __future__ import annotations

from django.contrib import admin
from django.utils import timezone

from projects.admin.scoping import TeamScopedAdmin
from projects.forms.objective import ObjectiveForm
from projects.models import ServiceLevelObjective
from projects.objectives.status import objective_status


@admin.register(ServiceLevelObjective)
class ObjectiveAdmin(TeamScopedAdmin):
    form = ObjectiveForm
    list_display = ["name", "kind", "target_percent", "window", "attainment"]
    list_filter = ["kind", "calendar_month"]
    search_fields = ["name"]
    autocomplete_fields = ["project"]
    fieldsets = [
        (
            None,
            {
                "description": "A project, a tag or a status-page section: one.",
                "fields": ["name", "project", "tag", "section"],
            },
        ),
        (
            "Target",
            {
                "description": "Availability: up polls out of all counted. "
                "Latency: polls with a response within the threshold "
                "(docs/objectives.md states every formula).",
                "fields": [
                    "kind",
                    "target_percent",
                    "threshold_ms",
                    "exclude_maintenance",
                ],
            },
        ),
        ("Window", {"fields": ["window_days", "calendar_month"]}),
        (
            "Burn-rate alerts",
            {
                "description": "Channels: told of every rule. Each rule's "
                "own list: told of that rule only (a channel in both hears "
                "each message once).",
                "fields": [
                    "channels",
                    "page_1h_channels",
                    "page_6h_channels",
                    "ticket_3d_channels",
                ],
            },
        ),
    ]

    @admin.display(description="window")
    def window(self, objective: ServiceLevelObjective) -> str:
        if objective.calendar_month:
            return "calendar month"
        return f"{objective.window_days} days"

    @admin.display(description="attainment")
    def attainment(self, objective: ServiceLevelObjective) -> str:
        status = objective_status(objective, timezone.now())
        if status.attainment_percent is None:
            return "no polls"
        return (
            f"{status.attainment_percent:.3f} % "
            f"({status.error_budget_remaining_percent:.0f} % of budget left)"
        )
