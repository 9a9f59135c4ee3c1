from __future__ import annotations

from datetime import timedelta

from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from monitor.dates import when
from projects.admin.as_code import as_code_urls
from projects.admin.channel_actions import attach_channels, detach_channels
from projects.admin.escalation import EscalationStepInline
from projects.admin.flows import FlowStepInline
from projects.admin.scoping import (
    TeamScopedAdmin,
    TeamScopedInline,
    admin_actor,
)
from projects.admin.status_pages import BadgeAdminMixin
from projects.forms.project import ProjectForm
from projects.models import (
    HousekeepingRun,
    Incident,
    PollResultRow,
    Project,
    Region,
    Tag,
)
from projects.notifications.coverage import notify_nobody
from projects.notifications.masking import MASK
from projects.signals import projects_bulk_changed
from projects.teams.audit import Actor, record, snapshot
from projects.teams.scoping import current_team

RECENT_RESULTS_SHOWN = 20
# Counting millions of rows on every page is the usual reason a results
# list gets slow; past this many, the admin pages through a capped count.
RESULT_COUNT_CAP = 10_000
# Unfiltered, the results list shows this much of the newest polls.
RECENT_RESULTS_WINDOW = timedelta(minutes=10)

# Classes in static/css/admin.css: the Content-Security-Policy refuses
# style attributes.
BADGE_COLOURS = {
    Project.State.UP: "green",
    Project.State.PENDING: "amber",
    Project.State.DOWN: "red",
}
LABELS = dict(Project.State.choices)


def status_badge(status: str) -> SafeString:
    """A poll's status (up, down) or a project's state (up, pending, down)."""
    if not status:
        return format_html('<span class="admin-muted">{}</span>', "no poll yet")
    return format_html(
        '<span class="admin-badge admin-badge-{}">{}</span>',
        BADGE_COLOURS[status],
        LABELS[status],
    )


class NotifiesFilter(admin.SimpleListFilter):
    """The dashboard's "N projects notify nobody" links here."""

    title = "notifies"
    parameter_name = "notifies"

    def lookups(self, request, model_admin):
        return [("nobody", "nobody")]

    def queryset(self, request, queryset):
        if self.value() == "nobody":
            return queryset.filter(pk__in=notify_nobody(current_team(request)))
        return queryset


class ProjectAdminForm(ProjectForm):
    """ProjectForm without `steps`: the admin edits them inline."""

    steps = None

    class Meta(ProjectForm.Meta):
        fields = [name for name in ProjectForm.Meta.fields if name != "steps"]


class TeamEscalationStepInline(TeamScopedInline, EscalationStepInline):
    """Escalation steps offer only the team's channels: a team's incidents
    never reach another team's channel."""


@admin.register(Project)
class ProjectAdmin(BadgeAdminMixin, TeamScopedAdmin):
    form = ProjectAdminForm
    # Adds "Export as YAML" and "Import YAML" (projects/admin/as_code.py).
    change_list_template = "admin/projects/project/change_list.html"

    class Media:
        js = ["js/project_kinds.js"]  # shows the URL's kind's section only

    list_display = [
        "name",
        "url_column",
        "check_column",
        "interval_column",
        "enabled",
        "status_column",
        "last_polled_at",
        "response_time_column",
    ]
    list_filter = [
        "enabled",
        "state",
        "kind",
        "method",
        ("tags", admin.RelatedOnlyFieldListFilter),
        NotifiesFilter,
    ]
    search_fields = ["name", "url"]
    filter_horizontal = ["tags"]
    actions = [
        "enable_projects",
        "disable_projects",
        attach_channels,
        detach_channels,
        "regenerate_badge_keys",
    ]
    inlines = [TeamEscalationStepInline, FlowStepInline]
    readonly_fields = [
        "ping_url",
        "last_polled_at",
        "status_column",
        "last_status_code",
        "response_time_column",
        "consecutive_failures",
        "failing_since",
        "tls_expires_at",
        "domain_expires_at",
        "recent_results",
        "badge_urls",
        "header_names",
    ]
    # What a newcomer types first (kind, name, URL), then when to check and
    # when to tell; the rest folded away. The simple case fits one screen.
    fieldsets = [
        (None, {"fields": ["kind", "name", "url", "enabled", "ping_url"]}),
        (
            "Schedule and alerts",
            {
                "fields": [
                    ("interval", "interval_unit"),
                    "timeout_seconds",
                    "grace_seconds",
                    ("failure_threshold", "recovery_threshold"),
                    "degraded_after_ms",
                    "channels",
                ]
            },
        ),
        # One section per kind of check, labelled by its schemes; a small
        # script (static/js/project_kinds.js) shows only the one the URL
        # chooses. Without it every section shows.
        (
            "HTTP(S): what counts as up",
            {
                "classes": ["kind-section", "kind-http", "kind-https"],
                "description": "Every rule must hold; the first that fails is "
                "the poll's reason. Content rules read the first 1 MiB of "
                "the final response.",
                "fields": [
                    "expected_status",
                    ("keyword", "keyword_mode", "keyword_case_sensitive"),
                    ("json_query", "json_operator", "json_expected"),
                    "header_assertions",
                ],
            },
        ),
        (
            "HTTP(S) request (http://, https://)",
            {
                "classes": ["collapse", "kind-section", "kind-http", "kind-https"],
                "fields": [
                    "method",
                    "headers",
                    "body",
                    "follow_redirects",
                    "allow_insecure_redirects",
                    "verify_tls",
                ],
            },
        ),
        (
            "UDP and SSH (udp://, ssh://)",
            {
                "classes": ["kind-section", "kind-udp", "kind-ssh"],
                "fields": [
                    ("udp_payload", "udp_payload_hex"),
                    ("expected_reply", "expected_reply_mode"),
                ],
            },
        ),
        (
            "DNS (dns://)",
            {
                "classes": ["kind-section", "kind-dns"],
                "fields": [
                    ("dns_expected_rcode", "dns_answer_match", "dns_require_dnssec"),
                    "dns_expected_answers",
                ],
            },
        ),
        (
            "Ping (icmp://)",
            {
                "classes": ["kind-section", "kind-icmp"],
                "fields": [("ping_count", "ping_max_loss_percent")],
            },
        ),
        (
            "Every kind",
            {
                "classes": ["collapse"],
                "fields": [
                    "max_response_time_ms",
                    ("tls_expiry_warning_days", "domain_expiry_warning_days"),
                ],
            },
        ),
        ("Tags", {"classes": ["collapse"], "fields": ["tags"]}),
        (
            "Regions",
            {
                "classes": ["collapse"],
                "description": "Where it is checked from (docs/regions.md). "
                "None chosen: every region with live pollers.",
                "fields": ["regions", "quorum"],
            },
        ),
        ("Badges", {"classes": ["collapse"], "fields": ["badge_urls"]}),
        (
            "Current state",
            {
                "fields": [
                    "status_column",
                    "last_polled_at",
                    "last_status_code",
                    "response_time_column",
                    "consecutive_failures",
                    "failing_since",
                    "tls_expires_at",
                    "domain_expires_at",
                    "recent_results",
                ]
            },
        ),
    ]

    @admin.display(description="URL", ordering="url")
    def url_column(self, project: Project) -> str:
        return project.shown_url  # a service check's password masked

    def get_urls(self) -> list:
        return as_code_urls(self.admin_site) + super().get_urls()

    def get_fieldsets(self, request: HttpRequest, obj=None) -> list:
        """Someone who may not change the project (a viewer) reads the
        headers' names only: the change page shows read-only fields in
        clear, and headers often carry a token (S4-15)."""
        fieldsets = super().get_fieldsets(request, obj)
        if self.has_change_permission(request, obj):
            return fieldsets
        swap = {"headers": "header_names"}
        return [
            (title, {**options, "fields": [swap.get(f, f) for f in options["fields"]]})
            for title, options in fieldsets
        ]

    @admin.display(description="headers")
    def header_names(self, project: Project) -> str:
        return ", ".join(f"{name}: {MASK}" for name in project.headers or {}) or "-"

    def get_changeform_initial_data(self, request: HttpRequest) -> dict:
        """A new project is checked every 60 s, as other monitors start
        (the model's default, 5 min, stays for the API and YAML)."""
        return {
            "interval": 60,
            "interval_unit": Project.IntervalUnit.SECONDS,
            **super().get_changeform_initial_data(request),
        }

    @admin.display(description="ping URL")
    def ping_url(self, project: Project) -> SafeString | str:
        if not project.is_heartbeat:
            return "Heartbeat projects only."
        if project.ping_key is None:
            return "Given when the project is saved."
        path = reverse("pings:ping", args=[project.ping_key])
        return format_html(
            "<code>{}</code> (GET or POST; add <code>/fail</code> to report a "
            "failure; the body, up to 10 KB, is kept). The full address is on "
            '<a href="{}">the project page</a>.',
            path,
            project.get_absolute_url(),
        )

    @admin.display(description="check")
    def check_column(self, project: Project) -> str:
        """The request method for HTTP, else what is checked: a TCP port or
        a heartbeat has no method (the list showed GET for every row)."""
        kind = project.check_kind
        if kind is None:
            return "heartbeat"
        return project.method if kind.sends_http and not project.is_flow else kind.label

    @admin.display(description="interval")
    def interval_column(self, project: Project) -> str:
        return project.interval_display

    @admin.display(description="state", ordering="state")
    def status_column(self, project: Project) -> SafeString:
        return status_badge(project.state)

    @admin.display(description="response time", ordering="last_response_time_ms")
    def response_time_column(self, project: Project) -> str:
        if project.last_response_time_ms is None:
            return "-"
        return f"{project.last_response_time_ms} ms"

    @admin.display(description=f"latest {RECENT_RESULTS_SHOWN} results")
    def recent_results(self, project: Project) -> SafeString | str:
        if project.pk is None:
            return "-"
        results = project.results.order_by("-polled_at")[:RECENT_RESULTS_SHOWN]
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    when(result.polled_at),
                    status_badge(result.status),
                    result.status_code or "-",
                    "-"
                    if result.response_time_ms is None
                    else f"{result.response_time_ms} ms",
                    result.error_message,
                )
                for result in results
            ),
        )
        if not rows:
            return "No polls yet."
        every_poll = reverse("admin:projects_pollresultrow_changelist")
        return format_html(
            "<table><thead><tr><th>polled at (UTC)</th><th>status</th><th>code</th>"
            "<th>time</th><th>error</th></tr></thead><tbody>{}</tbody></table>"
            '<p><a href="{}?project__id__exact={}">Every poll of this project</a></p>',
            rows,
            every_poll,
            project.pk,
        )

    def get_deleted_objects(self, objs, request: HttpRequest):
        """Django's, without its refusal for a project's downtime incidents:
        their admin keeps each from being deleted on its own (they are the
        project's history), which made every project that ever went down
        impossible to delete here (403). They go with their project, for
        whoever may delete incidents at all."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(
            objs, request
        )
        if self.admin_site._registry[Incident].has_delete_permission(request):
            perms_needed.discard(Incident._meta.verbose_name)
        return deleted, counts, perms_needed, protected

    @admin.action(description="Enable selected projects", permissions=["change"])
    def enable_projects(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = set_enabled(queryset, enabled=True, actor=admin_actor(request))
        self.message_user(request, f"Enabled {count} project(s).", messages.SUCCESS)

    @admin.action(description="Disable selected projects", permissions=["change"])
    def disable_projects(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = set_enabled(queryset, enabled=False, actor=admin_actor(request))
        self.message_user(request, f"Disabled {count} project(s).", messages.SUCCESS)


def set_enabled(queryset: QuerySet, *, enabled: bool, actor: Actor) -> int:
    befores = {project.pk: snapshot(project) for project in queryset}
    project_ids = list(befores)
    count = Project.objects.filter(pk__in=project_ids).update(enabled=enabled)
    for project in Project.objects.filter(pk__in=project_ids):
        record(project, befores[project.pk], actor=actor)
    projects_bulk_changed.send(sender=Project, project_ids=project_ids)
    return count


class CappedCountPaginator(Paginator):
    """Counts at most RESULT_COUNT_CAP rows, so a page costs the same with
    ten rows or ten million."""

    @cached_property
    def count(self) -> int:
        return self.object_list[:RESULT_COUNT_CAP].count()


@admin.register(PollResultRow)
class PollResultAdmin(TeamScopedAdmin):
    list_display = [
        "polled_at",
        "project",
        "status_column",
        "status_code",
        "response_time_ms",
        "phases_column",
        "error_message",
    ]
    # Rows have no page of their own (see PollResultRow) and no actions.
    list_display_links = None
    actions = None
    list_filter = ["status", ("project", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["project"]
    date_hierarchy = "polled_at"
    paginator = CappedCountPaginator
    show_full_result_count = False
    ordering = ["-polled_at"]
    sortable_by = ()
    list_per_page = 100
    # Facet counts would scan every result on each page view.
    show_facets = admin.ShowFacets.NEVER

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        rows = super().get_queryset(request)
        if narrowed(request):
            return rows
        # One project's polls come newest first straight from the primary
        # key; all projects' polls by time would be sorted from the whole
        # table (on PostgreSQL the time index is BRIN, which cannot sort).
        return rows.filter(polled_at__gte=timezone.now() - RECENT_RESULTS_WINDOW)

    def changelist_view(self, request: HttpRequest, extra_context=None):
        if not narrowed(request):
            minutes = int(RECENT_RESULTS_WINDOW.total_seconds() // 60)
            extra_context = {
                "subtitle": (
                    f"The last {minutes} minutes, newest first. "
                    "Choose a project or a day for older polls."
                ),
                **(extra_context or {}),
            }
        return super().changelist_view(request, extra_context)

    @admin.display(description="status", ordering="status")
    def status_column(self, result: PollResultRow) -> SafeString:
        return status_badge(result.status)

    @admin.display(description="phases")
    def phases_column(self, result: PollResultRow) -> str:
        return result.phases_text or "-"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: PollResultRow | None = None
    ) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: PollResultRow | None = None
    ) -> bool:
        return False


def narrowed(request: HttpRequest) -> bool:
    """Whether the results list is filtered to one project or a date."""
    return any(key.startswith(("project__", "polled_at__")) for key in request.GET)


@admin.register(HousekeepingRun)
class HousekeepingRunAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "job",
        "duration_column",
        "rows_removed",
        "summary",
        "error",
    ]
    list_filter = ["job"]
    ordering = ["-started_at"]

    @admin.display(description="took")
    def duration_column(self, run: HousekeepingRun) -> str:
        seconds = run.duration_seconds
        return "running" if seconds is None else f"{seconds:.1f} s"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: HousekeepingRun | None = None
    ) -> bool:
        return False


@admin.register(Tag)
class TagAdmin(TeamScopedAdmin):
    list_display = ["name", "color", "project_count"]
    search_fields = ["name"]

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).annotate(project_count=Count("projects"))

    @admin.display(description="projects", ordering="project_count")
    def project_count(self, tag: Tag) -> int:
        return tag.project_count


@admin.register(Region)
class RegionAdmin(admin.ModelAdmin):
    """Regions appear when a poller of them starts (docs/regions.md); here
    they get a label. Their name is the POLLER_REGION their pollers use."""

    list_display = ["name", "label", "last_seen_at", "blind_since"]
    fields = ["name", "label", "last_seen_at", "blind_since"]
    readonly_fields = ["name", "last_seen_at", "blind_since"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: Region | None = None
    ) -> bool:
        return False
