"""Teams and their members in the admin: a manager manages the current
team's members and name; only a superuser creates, deletes or trusts a
team, and only a superuser sees the account e-mails' outbox."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from projects.admin.scoping import TeamScopedAdmin, changes_text
from projects.models import AccountEmail, AuditEntry, Membership, Role, Team
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


@admin.register(AccountEmail)
class AccountEmailAdmin(admin.ModelAdmin):
    """Invitations and password resets on their way: what is pending,
    delivered or given up on, and why. Not the body: it holds the link.
    Superusers only, as the admin's Users page: an address belongs to no
    team."""

    list_display = [
        "created_at",
        "to",
        "subject",
        "state",
        "attempts",
        "next_attempt_at",
        "last_error",
    ]
    list_filter = ["state"]
    fields = readonly_fields = [
        "to",
        "subject",
        "state",
        "created_at",
        "attempts",
        "next_attempt_at",
        "delivered_at",
        "last_error",
    ]
    ordering = ["-created_at"]
    actions = ["retry_now"]
    show_facets = admin.ShowFacets.NEVER

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser  # for the action; every field is read-only

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    @admin.action(description="Retry now (pending only)", permissions=["change"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        # A failed message has forgotten its body: there is nothing to resend.
        count = queryset.filter(state=AccountEmail.State.PENDING).update(
            next_attempt_at=timezone.now(), claimed_until=None
        )
        self.message_user(request, f"{count} e-mail(s) queued again.")
