"""Teams and their members in the admin: a manager manages the current
team's members and name; only a superuser creates, deletes or trusts a
team."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from projects.models import Membership, Role, Team
from projects.teams.admin_scoping import TeamScopedAdmin


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
        return [] if request.user.is_superuser else ["trusted"]

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
