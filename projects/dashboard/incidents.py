"""The incidents page, and acknowledging from it or from a signed link."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.core.paginator import Paginator
from django.db.models import Prefetch, prefetch_related_objects
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from projects.dashboard.banners import monitor_banners, setup_hints
from projects.dashboard.params import positive_int
from projects.dashboard.queries.incidents import incident_list as list_incidents
from projects.incidents.acknowledge import acknowledge as acknowledge_incident
from projects.models import Escalation, Incident, Project, Role
from projects.notifications.links import incident_from_token
from projects.teams.audit import Actor
from projects.teams.scoping import current_team, for_team, may

INCIDENTS_PER_PAGE = 50


@login_required
def incident_list(request: HttpRequest) -> HttpResponse:
    team = current_team(request)
    project = None
    project_id = positive_int(request.GET, "project")
    if project_id is not None:
        projects = for_team(Project.objects.only("name"), team)
        project = get_object_or_404(projects, pk=project_id)
    incidents = list_incidents(team=team, project_id=project and project.pk)
    page = Paginator(incidents, INCIDENTS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = with_escalations(page.object_list)
    context = {
        "page": page,
        "project": project,
        "can_post_updates": may(request, Role.EDITOR),
        "now": timezone.now(),
        "banners": monitor_banners(),
        # An incident implies a project: no query to ask.
        "hints": setup_hints(team=team, has_projects=bool(page.object_list) or None),
    }
    return render(request, "projects/incidents.html", context)


def with_escalations(incidents) -> list[Incident]:
    """The incidents, each with the escalation steps it fired (and their
    channels): three queries for the page, however many incidents."""
    incidents = list(incidents)
    fired = Escalation.objects.select_related("step").prefetch_related("step__channels")
    prefetch_related_objects(incidents, Prefetch("escalations", queryset=fired))
    return incidents


@login_required
@require_POST
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    # Any member may acknowledge: a viewer is who is on call.
    incidents = for_team(Incident.objects.all(), current_team(request))
    incident = get_object_or_404(incidents.select_related("project"), pk=pk)
    actor = Actor.of_user(request.user, via="dashboard")
    if acknowledge_incident(pk, by=request.user, actor=actor):
        messages.success(request, f"Acknowledged the incident of {incident.project}.")
    else:
        messages.info(request, "That incident was already acknowledged or is over.")
    return HttpResponseRedirect(_next_page(request))


def _next_page(request: HttpRequest) -> str:
    wanted = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return reverse("incidents:list")


# The page is for whoever holds the link; no cache along the way keeps it.
@never_cache
@require_http_methods(["GET", "POST"])
def acknowledge_link(request: HttpRequest, token: str) -> HttpResponse:
    """The link in a notification. GET only asks (mail scanners follow
    links); the button POSTs. No login: the signature is the permission."""
    try:
        incident_id = incident_from_token(token)
    except signing.SignatureExpired:
        return _link_page(request, None, "expired", status=410)
    except signing.BadSignature:
        return _link_page(request, None, "invalid", status=404)
    incident = Incident.objects.select_related("project").filter(pk=incident_id).first()
    if incident is None:
        return _link_page(request, None, "invalid", status=404)
    if request.method == "POST":
        done = acknowledge_incident(incident_id)
        incident.refresh_from_db()
        return _link_page(request, incident, "done" if done else "already")
    return _link_page(request, incident, "ask")


def _link_page(
    request: HttpRequest, incident: Incident | None, outcome: str, *, status=200
) -> HttpResponse:
    context = {"incident": incident, "outcome": outcome, "now": timezone.now()}
    return render(request, "projects/acknowledge.html", context, status=status)
