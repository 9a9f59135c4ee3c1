"""Status pages, incidents and their updates, and subscribers in the
admin."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from projects.admin.scoping import TeamScopedAdmin, TeamScopedInline
from projects.announcements.updates import StatusUpdateForm, post_update
from projects.models import (
    Incident,
    Project,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
)
from projects.models.project import new_badge_key

BADGES = (
    "status.svg",
    "uptime-24h.svg",
    "uptime-7d.svg",
    "uptime-30d.svg",
    "uptime-90d.svg",
    "response-time.svg",
    "certificate.svg",
    "domain.svg",
    "shields.json",
)


class BadgeAdminMixin:
    """The project admin's badge URLs and the action that retires them."""

    @admin.display(description="badges")
    def badge_urls(self, project: Project) -> SafeString:
        if not project.pk:
            return format_html("{}", "Shown once the project is saved.")
        return format_html_join(
            "",
            '<div><a href="{0}">{0}</a></div>',
            ((f"/badge/{project.badge_key}/{name}",) for name in BADGES),
        )

    @admin.action(
        description="Regenerate badge keys (old badge URLs stop working)",
        permissions=["change"],
    )
    def regenerate_badge_keys(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for pk in queryset.values_list("pk", flat=True):
            Project.objects.filter(pk=pk).update(badge_key=new_badge_key())
            count += 1
        self.message_user(
            request, f"New badge keys for {count} projects.", messages.SUCCESS
        )


class SectionInline(TeamScopedInline, admin.StackedInline):
    model = StatusPageSection
    extra = 0
    fields = ["name", "position", "projects", "tag"]
    filter_horizontal = ["projects"]


@admin.register(StatusPage)
class StatusPageAdmin(TeamScopedAdmin):
    list_display = ["title", "slug", "visibility", "custom_domain", "page_link"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [SectionInline]
    fieldsets = [
        (None, {"fields": ["title", "slug", "description", "logo_url", "footer"]}),
        ("Who sees it", {"fields": ["visibility", "custom_domain"]}),
        (
            "What it shows",
            {
                "fields": [
                    "show_uptime_days",
                    "show_response_times",
                    "show_objectives",
                    "incidents_need_update",
                ]
            },
        ),
    ]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "logo_url":
            kwargs["assume_scheme"] = "https"
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_form(self, request, obj=None, change=False, **kwargs):
        """The slug's help names the page's address: the model's help text,
        "/status/<slug>/", is read as markup by the admin and showed
        "/status//"."""
        form = super().get_form(request, obj, change, **kwargs)
        if "slug" in form.base_fields:
            slug = obj.slug if obj is not None else "your-slug"
            address = reverse("status_pages:page", args=[slug])
            form.base_fields["slug"].help_text = format_html(
                "The page is at <code>{}</code>.", address
            )
        return form

    @admin.display(description="page")
    def page_link(self, page: StatusPage) -> SafeString:
        return format_html('<a href="{0}">{0}</a>', page.get_absolute_url())

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # A section's projects change after the page row is saved: touch
        # it again so the page's version (and cache) moves on.
        StatusPage.objects.filter(pk=form.instance.pk).update(updated_at=timezone.now())


class StatusUpdateInline(TeamScopedInline, admin.StackedInline):
    model = StatusUpdate
    form = StatusUpdateForm
    extra = 1
    fields = ["status", "message", "created_at", "author"]
    readonly_fields = ["created_at", "author"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # the timeline is what was said; post a new update


@admin.register(Incident)
class IncidentAdmin(TeamScopedAdmin):
    """Downtime and certificate incidents are the writer's: people add
    updates to them. Manual incidents are written here."""

    list_display = ["__str__", "kind", "title", "started_at", "resolved_at"]
    list_filter = ["kind", ("resolved_at", admin.EmptyFieldListFilter)]
    list_select_related = ["project"]
    search_fields = ["project__name", "title"]
    inlines = [StatusUpdateInline]
    raw_id_fields = ["project"]

    def get_fields(self, request, obj=None):
        if obj is None or obj.kind == Incident.Kind.MANUAL:
            return ["project", "title", "started_at", "resolved_at"]
        return ["project", "kind", "started_at", "resolved_at", "first_error"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None or obj.kind == Incident.Kind.MANUAL:
            return []
        return ["project", "kind", "started_at", "resolved_at", "first_error"]

    def has_delete_permission(self, request, obj=None) -> bool:
        if not super().has_delete_permission(request, obj):
            return False
        return obj is None or obj.kind == Incident.Kind.MANUAL

    def save_model(self, request, obj: Incident, form, change) -> None:
        if not change:
            obj.kind = Incident.Kind.MANUAL
            obj.confirmed_at = obj.started_at
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change) -> None:
        if formset.model is not StatusUpdate:
            return super().save_formset(request, form, formset, change)
        for update in formset.save(commit=False):
            update.author = request.user
            update.incident = form.instance
            post_update(update)

    def view_on_site(self, obj: Incident) -> str:
        return reverse("incidents:list")


@admin.register(Subscriber)
class SubscriberAdmin(TeamScopedAdmin):
    list_display = ["__str__", "page", "confirmed_at", "created_at"]
    list_filter = [
        ("page", admin.RelatedOnlyFieldListFilter),
        ("confirmed_at", admin.EmptyFieldListFilter),
    ]
    fields = ["page", "email", "webhook_url", "confirmed_at", "created_at"]
    readonly_fields = ["created_at"]
    search_fields = ["email"]
