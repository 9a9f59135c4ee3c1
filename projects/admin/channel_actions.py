"""The project list's bulk "attach channels" and "detach channels": a page
between the list and the change that asks which of the team's channels,
as Django's own "delete selected" asks for a confirmation."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from projects.admin.scoping import admin_actor
from projects.models import NotificationChannel, Project
from projects.notifications import coverage
from projects.teams.audit import record, snapshot
from projects.teams.scoping import current_team, for_team

TEMPLATE = "admin/projects/project/channels_action.html"
VERBS = {
    "attach_channels": ("Attach", "attached to", coverage.attach),
    "detach_channels": ("Detach", "detached from", coverage.detach),
}


@admin.action(
    description="Attach channels to selected projects", permissions=["change"]
)
def attach_channels(modeladmin, request: HttpRequest, queryset: QuerySet):
    return _channels_action(modeladmin, request, queryset, "attach_channels")


@admin.action(
    description="Detach channels from selected projects", permissions=["change"]
)
def detach_channels(modeladmin, request: HttpRequest, queryset: QuerySet):
    return _channels_action(modeladmin, request, queryset, "detach_channels")


def _channels_action(modeladmin, request, queryset, action: str):
    verb, done, change = VERBS[action]
    channels = for_team(NotificationChannel.objects.all(), current_team(request))
    chosen = list(channels.filter(pk__in=request.POST.getlist("channel")))
    if "apply" in request.POST and chosen:
        befores = {project.pk: snapshot(project) for project in queryset}
        links = change(chosen, queryset)
        for project in Project.objects.filter(pk__in=list(befores)):
            record(project, befores[project.pk], actor=admin_actor(request))
        names = ", ".join(f"“{channel.name}”" for channel in chosen)
        modeladmin.message_user(
            request, f"{names}: {done} {links} link(s) in all.", messages.SUCCESS
        )
        return None
    if "apply" in request.POST:
        modeladmin.message_user(request, "Choose at least one channel.", messages.ERROR)
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": f"{verb} channels",
        "opts": modeladmin.model._meta,
        "action": action,
        "verb": verb,
        "projects": queryset,
        "channels": channels,
        "chosen": {channel.pk for channel in chosen},
    }
    return TemplateResponse(request, TEMPLATE, context)
