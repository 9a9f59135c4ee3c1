"""The admin's "Export as YAML" download and "Import YAML" page.

The import page shows the same plan as `importprojects --dry-run` and
applies it only when the user confirms; the file's text travels in the
confirming form, and is planned again, in the transaction that applies it.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.utils import timezone

from projects.as_code.apply import import_projects
from projects.as_code.bounded_yaml import MAX_BYTES
from projects.as_code.export import export_yaml
from projects.as_code.plan import plan_import
from projects.as_code.validation import InvalidFile, Problem, RefusedFile
from projects.models import Project, Role
from projects.teams.audit import Actor
from projects.teams.scoping import current_team, may

TEMPLATE = "admin/projects/project/import_yaml.html"


def as_code_urls(site: admin.AdminSite) -> list[URLPattern]:
    """Prepended to ProjectAdmin's URLs; admin_view checks the login and
    staff status and adds CSRF protection."""
    return [
        path(
            "export-yaml/",
            site.admin_view(export_view),
            name="projects_project_export_yaml",
        ),
        path(
            "import-yaml/",
            site.admin_view(lambda request: import_view(request, site)),
            name="projects_project_import_yaml",
        ),
    ]


def export_view(request: HttpRequest) -> HttpResponse:
    """Header values are masked; ?with_secrets=1 writes them, for editors."""
    with_secrets = request.GET.get("with_secrets") == "1"
    if not may(request, Role.EDITOR if with_secrets else Role.VIEWER):
        raise PermissionDenied
    text = export_yaml(current_team(request), with_secrets=with_secrets)
    response = HttpResponse(text, content_type="application/yaml")
    filename = f"projects-{timezone.now():%Y%m%d-%H%M%S}.yaml"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def import_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    if not may(request, Role.EDITOR):
        raise PermissionDenied
    team = current_team(request)
    context = {
        **site.each_context(request),
        "opts": Project._meta,
        "title": "Import YAML",
        "text": "",
        "prune": request.POST.get("prune") == "on",
    }
    if request.method != "POST":
        return render(request, TEMPLATE, context)
    text, problem = _submitted_text(request)
    context["text"] = text
    if problem:
        context["problems"] = [problem]
        return render(request, TEMPLATE, context, status=400)
    try:
        if "apply" in request.POST:
            plan = import_projects(
                text,
                prune=context["prune"],
                team=team,
                actor=Actor.of_user(request.user, via="import"),
            )
            messages.success(request, f"Imported: {plan.summary()}.")
            return HttpResponseRedirect(reverse("admin:projects_project_changelist"))
        context["plan"] = plan_import(text, prune=context["prune"], team=team)
    except RefusedFile as error:
        context["problems"], context["text"] = error.problems, ""
        return render(request, TEMPLATE, context, status=400)
    except InvalidFile as error:
        context["problems"] = error.problems
    return render(request, TEMPLATE, context)


def _submitted_text(request: HttpRequest) -> tuple[str, Problem | None]:
    upload = request.FILES.get("file")
    if upload is None:
        return request.POST.get("text", ""), None
    if upload.size > MAX_BYTES:
        too_big = f"The file is {upload.size:,} bytes; at most {MAX_BYTES:,} are read."
        return "", Problem("file", "", too_big)
    try:
        return upload.read().decode("utf-8"), None
    except UnicodeDecodeError:
        return "", Problem("file", "", "The file is not UTF-8 text.")
