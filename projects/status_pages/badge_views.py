"""Badges: /badge/<key>/… per project, /status/<slug>/badge.svg per page.

No login: a project's badge key is the permission. A page's badge follows
the page's rule (projects.status_pages.access): a private page's badge is
for its team, and kept out of shared caches. An unknown key or page, or
a private page seen from outside its team, gets a 404 whose body is still
a badge ("unknown"), so an embedded image shows something readable
instead of a broken picture.
"""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.cache import patch_cache_control

from projects.models import Project, StatusPage
from projects.status_pages import badges, content
from projects.status_pages.access import Access, access, cache_scope, refusal
from projects.status_pages.badges import UNKNOWN, Badge
from projects.status_pages.svg import badge as draw

BADGE_MAX_AGE = 60
SUMMED_BADGE_CACHE_SECONDS = 30
SVG = "image/svg+xml; charset=utf-8"


def project_badge(request: HttpRequest, key: str, kind: str) -> HttpResponse:
    project = Project.objects.filter(badge_key=key).values(*badges.PROJECT_FIELDS)
    project = project.first()
    if project is None:
        return _svg(UNKNOWN, status=404)
    return _svg(_project_badge(project, kind))


def shields_endpoint(request: HttpRequest, key: str) -> HttpResponse:
    """shields.io's endpoint schema, for https://img.shields.io/endpoint?url=…"""
    project = Project.objects.filter(badge_key=key).values(*badges.PROJECT_FIELDS)
    project = project.first()
    found = project is not None
    shown = badges.status_badge(project) if found else UNKNOWN
    response = JsonResponse(
        {
            "schemaVersion": 1,
            "label": shown.label,
            "message": shown.message,
            "color": shown.color,
        },
        status=200 if found else 404,
    )
    return _cached(response)


def page_badge(request: HttpRequest, slug: str) -> HttpResponse:
    page = StatusPage.objects.filter(slug=slug).first()
    if page is None:
        return _svg(UNKNOWN, status=404)
    if access(request, page) is Access.HIDDEN:
        return _svg(UNKNOWN, status=404, scope=cache_scope(page))
    if (refused := refusal(request, page)) is not None:
        return refused
    state = content.overall_state(page, timezone.now())
    return _svg(badges.PAGE_BADGES[state], scope=cache_scope(page))


def _project_badge(project: dict, kind: str) -> Badge:
    now = timezone.now()
    if kind == "status":
        return badges.status_badge(project)
    if kind == "certificate":
        return badges.certificate_badge(project, now)
    if kind == "domain":
        return badges.domain_badge(project, now)
    # Sums over rollups move slowly: kept a little, per project, so a
    # README viewed by many costs one indexed lookup each time.
    return cache.get_or_set(
        f"badge:{project['id']}:{kind}",
        lambda: _summed_badge(project, kind, now),
        SUMMED_BADGE_CACHE_SECONDS,
    )


def _summed_badge(project: dict, kind: str, now) -> Badge:
    if kind == "response-time":
        average = content.response_times([project["id"]], now).get(project["id"])
        return badges.response_time_badge(average)
    return badges.uptime_badge(project, kind.removeprefix("uptime-"), now)


def _svg(
    shown: Badge, *, status: int = 200, scope: dict[str, bool] | None = None
) -> HttpResponse:
    response = HttpResponse(
        draw(shown.label, shown.message, shown.color), content_type=SVG, status=status
    )
    return _cached(response, scope)


def _cached(
    response: HttpResponse, scope: dict[str, bool] | None = None
) -> HttpResponse:
    patch_cache_control(response, max_age=BADGE_MAX_AGE, **(scope or {"public": True}))
    return response


def unknown_badge(request: HttpRequest, **ignored) -> HttpResponse:
    """Any other .svg under /badge/: a badge name that does not exist."""
    return _svg(UNKNOWN, status=404)
