"""Agents in the admin: made here (the token is shown once, on the page
that answers the save, and never stored), listed with what each last
reported, revoked.

An agent receives the URLs, headers and secrets of the projects it polls,
and an install-wide one polls every team's: only superusers see, make and
revoke agents (docs/agents.md)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from projects.models import Agent


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "region",
        "team",
        "active_since",
        "last_seen_at",
        "version",
        "buffered_results",
        "buffered_oldest_at",
        "revoked_at",
    ]
    list_filter = ["region", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "host"]
    actions = ["revoke"]
    readonly_fields = [
        "prefix",
        "created_at",
        "last_seen_at",
        "version",
        "host",
        "active_since",
        "buffered_results",
        "buffered_oldest_at",
        "revoked_at",
    ]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj: Agent | None = None):
        # Where an agent polls from and whose projects it sees do not
        # change under it: make a new agent.
        return (
            ["region", "team", *self.readonly_fields] if obj else self.readonly_fields
        )

    def save_model(self, request, obj: Agent, form, change: bool) -> None:
        if not change:
            request._new_agent_token = obj.set_new_token()
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: Agent, post_url_continue=None):
        token = getattr(request, "_new_agent_token", None)
        if token is None:
            return super().response_add(request, obj, post_url_continue)
        # Rendered, not redirected to: the token goes into no session,
        # cookie or message store, only into this one response.
        context = {
            **self.admin_site.each_context(request),
            "agent": obj,
            "token": token,
            "site_url": settings.SITE_URL,
            "opts": self.opts,
            "title": "Agent created",
        }
        response = TemplateResponse(
            request, "admin/projects/agent/created.html", context
        )
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke selected agents (they stop at their next sync)")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        count = 0
        for agent in queryset.filter(revoked_at=None):
            agent.revoke()
            count += 1
        self.message_user(request, f"Revoked {count} agent(s).", messages.SUCCESS)
        return None
