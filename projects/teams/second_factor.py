"""REQUIRE_2FA: someone signed in without a second factor is sent to set
one up (TOTP) before any other page. Sign-in, sign-out and the second
factor's own pages stay open, and so do the pages that need no login."""

from __future__ import annotations

from allauth.mfa.utils import is_mfa_enabled

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import urlencode

OPEN_PREFIXES = (
    "/accounts/",
    "/admin/logout/",
    "/static/",
    "/ping/",
    "/badge/",
    "/status/",
    "/teams/join/",
)


class RequireSecondFactorMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._must_set_up(request):
            setup = reverse("mfa_activate_totp")
            query = urlencode({"next": request.get_full_path()})
            return HttpResponseRedirect(f"{setup}?{query}")
        return self.get_response(request)

    def _must_set_up(self, request: HttpRequest) -> bool:
        return (
            settings.REQUIRE_2FA
            and request.user.is_authenticated
            and not request.path.startswith(OPEN_PREFIXES)
            and not is_mfa_enabled(request.user)
        )
