"""API keys in the admin: made here (the key is shown once, on the page
that answers the save, and never stored), listed by prefix, revoked."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from projects.models import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
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
    fields = ["name", "scope", "prefix", "created_at", "last_used_at", "revoked_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None):
        shown = ["prefix", "created_at", "last_used_at", "revoked_at"]
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
        count = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} API key(s).", messages.SUCCESS)
        return None
