"""Switching the current team from the header."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from projects.teams.scoping import switch_team


@login_required
@require_POST
def switch(request: HttpRequest) -> HttpResponse:
    team_id = request.POST.get("team", "")
    if not team_id.isdigit() or switch_team(request, int(team_id)) is None:
        raise Http404("No such team.")
    wanted = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        wanted = reverse("dashboard:overview")
    return HttpResponseRedirect(wanted)
