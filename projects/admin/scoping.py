"""The admin's side of teams: every list, form, filter and permission of a
team-owned model goes through TeamScopedAdmin, which asks
projects.teams.scoping, so the admin shows and changes only the current
team's objects, as the user's role there allows.

Roles, not Django's per-model permissions, decide here: viewers read,
editors change (`edit_role`), managers also manage people and keys. A
superuser may do everything in whichever team is current.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from monitor.dates import when
from projects.models import Role
from projects.teams.audit import Actor, entries_for, record, snapshot
from projects.teams.forms import team_form
from projects.teams.scoping import TEAM_PATHS, current_team, for_team, may

AUDIT_SHOWN = 20

# Fields whose value is a credential: never filterable, searchable or
# sortable, in any model's admin, through any relation.
SECRET_FIELDS = {
    ("projects", "notificationchannel", "url"),
    ("projects", "notificationchannel", "secret"),
    ("projects", "teamsecret", "value"),
    ("auth", "user", "password"),
    ("projects", "subscriber", "webhook_url"),
    ("projects", "subscriber", "token"),
}


def reveals_secret(model: type[Model], lookup: str) -> bool:
    """Whether a changelist lookup such as `notification__channel__secret__startswith`
    reaches a secret field: comparing against it leaks it a character at a
    time."""
    for part in lookup.split("__"):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False  # a lookup name (startswith) or a bad path
        meta = field.model._meta
        if (meta.app_label, meta.model_name, field.name) in SECRET_FIELDS:
            return True
        if field.related_model is None:
            return False
        model = field.related_model
    return False


class TeamScopedAdmin(admin.ModelAdmin):
    view_role = Role.VIEWER
    edit_role = Role.EDITOR

    def get_queryset(self, request: HttpRequest):
        return for_team(super().get_queryset(request), current_team(request))

    def get_exclude(self, request, obj=None):
        return [*(super().get_exclude(request, obj) or []), "team"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        return team_form(form, current_team(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        return _scoped_choices(field, db_field, request)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        return _scoped_choices(field, db_field, request)

    # The audit log: each change through the admin is recorded, and shown
    # on the object's page.

    def save_model(self, request: HttpRequest, obj, form, change) -> None:
        request._audit_before = snapshot(obj) if change else {}
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        before = getattr(request, "_audit_before", {})
        record(form.instance, before, actor=admin_actor(request))

    def delete_model(self, request: HttpRequest, obj) -> None:
        record(obj, snapshot(obj), actor=admin_actor(request), deleted=True)
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        for obj in queryset:
            record(obj, snapshot(obj), actor=admin_actor(request), deleted=True)
        super().delete_queryset(request, queryset)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return [*super().get_readonly_fields(request, obj), "audit_log"]

    def get_fieldsets(self, request: HttpRequest, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if self.fieldsets and "audit_log" in self.get_readonly_fields(request, obj):
            fieldsets = [*fieldsets, ("Audit log", {"fields": ["audit_log"]})]
        return fieldsets

    @admin.display(description="changes")
    def audit_log(self, obj) -> SafeString | str:
        if obj is None or obj.pk is None:
            return "Recorded once saved."
        return audit_table(entries_for(obj)[:AUDIT_SHOWN])

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        if reveals_secret(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may(request, self.view_role)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._may(request, self.view_role)

    def has_add_permission(self, request: HttpRequest, *args) -> bool:
        return self._may(request, self.edit_role)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._may(request, self.edit_role)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._may(request, self.edit_role)

    def _may(self, request: HttpRequest, role: str) -> bool:
        return _may(request, role)


class TeamScopedInline:
    """For an inline of a team-owned page: its choices are the team's, and
    the role, not Django's per-model permissions, decides what it may do."""

    view_role = Role.VIEWER
    edit_role = Role.EDITOR

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        return _scoped_choices(field, db_field, request)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        return _scoped_choices(field, db_field, request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _may(request, self.view_role)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return _may(request, self.edit_role)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return _may(request, self.edit_role)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return _may(request, self.edit_role)


def admin_actor(request: HttpRequest) -> Actor:
    return Actor.of_user(request.user, via="admin")


def audit_table(entries) -> SafeString | str:
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td></tr>",
        (
            (
                when(entry.at),
                entry.actor_name,
                entry.via,
                entry.get_action_display(),
                changes_text(entry.changes),
            )
            for entry in entries
        ),
    )
    if not rows:
        return "No recorded changes."
    return format_html(
        "<table><thead><tr><th>when (UTC)</th><th>who</th><th>what</th>"
        "<th>changes</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


def changes_text(changes: list[dict]) -> str:
    """One line per field: "name: old → new" (escaped by the caller)."""
    return "; ".join(
        f"{change['field']}: {_short(change['old'])} → {_short(change['new'])}"
        for change in changes
    )


def _short(value) -> str:
    text = "—" if value in (None, "", [], {}) else str(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _may(request: HttpRequest, role: str) -> bool:
    user = request.user
    return user.is_active and (user.is_superuser or may(request, role))


def _scoped_choices(field, db_field, request: HttpRequest):
    if field is not None and db_field.related_model in TEAM_PATHS:
        field.queryset = for_team(field.queryset, current_team(request))
    return field
