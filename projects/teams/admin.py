"""Teams and their members in the admin: a manager manages the current
team's members and name; only a superuser creates, deletes or trusts a
team."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from projects.models import AuditEntry, Membership, Role, Team
from projects.teams.admin_scoping import TeamScopedAdmin, changes_text
from projects.teams.scoping import current_team


@admin.register(Team)
class TeamAdmin(TeamScopedAdmin):
    list_display = ["name", "slug", "trusted"]
    prepopulated_fields = {"slug": ["name"]}
    edit_role = Role.MANAGER

    def get_queryset(self, request: HttpRequest):
        if request.user.is_superuser:
            return Team.objects.all()
        return super().get_queryset(request)

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list:
        # Trust lets a team's checks reach internal networks: the operator's call.
        fields = super().get_readonly_fields(request, obj)
        return fields if request.user.is_superuser else [*fields, "trusted"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser


@admin.register(Membership)
class MembershipAdmin(TeamScopedAdmin):
    list_display = ["user", "role"]
    list_filter = ["role"]
    search_fields = ["user__username", "user__email"]
    view_role = Role.MANAGER
    edit_role = Role.MANAGER

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        """A manager picks among the team's own people (to change a role);
        newcomers come by invitation. Other teams' people stay unlisted."""
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "user" and not request.user.is_superuser:
            team = current_team(request)
            field.queryset = field.queryset.filter(memberships__team=team).distinct()
        return field


@admin.register(AuditEntry)
class AuditEntryAdmin(TeamScopedAdmin):
    """The team's audit log, for its managers: read-only."""

    list_display = [
        "at",
        "actor_name",
        "via",
        "action",
        "object_type",
        "object_repr",
        "changes_column",
    ]
    list_filter = ["action", "via", "object_type"]
    search_fields = ["object_repr", "actor_name"]
    view_role = Role.MANAGER
    edit_role = Role.MANAGER
    show_facets = admin.ShowFacets.NEVER

    @admin.display(description="changes")
    def changes_column(self, entry: AuditEntry) -> str:
        return changes_text(entry.changes)

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list:
        return [field.name for field in AuditEntry._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
