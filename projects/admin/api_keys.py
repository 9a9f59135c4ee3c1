"""API keys in the admin: made here (the key is shown once, on the page
that answers the save, and never stored), listed by prefix, revoked.

A key belongs to the team it was made in and reaches only that team's
objects, so only the team's managers (and superusers) see, make and revoke
its keys; each creation, change and revocation is in the audit log."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from projects.admin.scoping import TeamScopedAdmin, admin_actor
from projects.models import ApiKey, Role
from projects.teams.audit import record, snapshot


@admin.register(ApiKey)
class ApiKeyAdmin(TeamScopedAdmin):
    # A key acts for the whole team: managing keys is a manager's right.
    view_role = Role.MANAGER
    edit_role = Role.MANAGER
    list_display = [
        "name",
        "prefix",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]
    fields = [
        "name",
        "scope",
        "prefix",
        "created_at",
        "last_used_at",
        "revoked_at",
        "audit_log",
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None):
        shown = ["prefix", "created_at", "last_used_at", "revoked_at", "audit_log"]
        # A key's power does not change under its holder: make a new key.
        return ["scope", *shown] if obj else shown

    def save_model(self, request, obj: ApiKey, form, change: bool) -> None:
        if not change:
            request._new_api_key = obj.set_new_key()
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue=None):
        key = getattr(request, "_new_api_key", None)
        if key is None:
            return super().response_add(request, obj, post_url_continue)
        # Rendered, not redirected to: the key goes into no session, cookie
        # or message store, only into this one response.
        context = {
            **self.admin_site.each_context(request),
            "api_key": obj,
            "key": key,
            "opts": self.opts,
            "title": "API key created",
        }
        response = TemplateResponse(request, "admin/api/apikey/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke selected API keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        now, count = timezone.now(), 0
        with transaction.atomic():
            for api_key in queryset.filter(revoked_at=None).select_for_update():
                before = snapshot(api_key)
                api_key.revoked_at = now
                api_key.save(update_fields=["revoked_at"])
                record(api_key, before, actor=admin_actor(request))
                count += 1
        self.message_user(request, f"Revoked {count} API key(s).", messages.SUCCESS)
        return None
