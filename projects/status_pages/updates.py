"""Posting a status update from /incidents/: one small form per open
incident, the same rules as the incident's admin page
(projects.announcements.updates)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from projects.announcements.updates import StatusUpdateForm, post_update
from projects.models import Incident, Role
from projects.teams.audit import Actor, record
from projects.teams.scoping import current_team, for_team, may


@login_required
@require_POST
def post(request: HttpRequest, pk: int) -> HttpResponse:
    if not may(request, Role.EDITOR):
        raise PermissionDenied
    incidents = for_team(Incident.objects.all(), current_team(request))
    incident = get_object_or_404(incidents.select_related("project"), pk=pk)
    form = StatusUpdateForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(
            f"{field}: {' '.join(text)}" for field, text in form.errors.items()
        )
        messages.error(request, f"The update was not posted ({errors}).")
    else:
        update = form.save(commit=False)
        update.incident = incident
        update.author = request.user
        with transaction.atomic():
            post_update(update)
            record(update, {}, actor=Actor.of_user(request.user, via="dashboard"))
        messages.success(request, f"Posted an update on {incident.project}.")
    return HttpResponseRedirect(reverse("incidents:list"))
