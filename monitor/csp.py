"""A Content-Security-Policy header on every response.

The pages need no inline script or style: scripts and styles come from
/static/, charts are inline SVG with classes, and the admin's own data
blocks (json_script) are `type="application/json"`, which CSP lets
through. So a script an attacker smuggles into a page does not run.
CONTENT_SECURITY_POLICY sets the header; empty sends none.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"
DEFAULT_POLICY = (
    "default-src 'self'; "
    "script-src 'self'; "
    "style-src 'self'; "
    # data: for images drawn in place (the admin's widgets, Swagger UI).
    "img-src 'self' data:; "
    "object-src 'none'; "
    "base-uri 'none'; "
    "form-action 'self'; "
    "frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and HEADER not in response:
            response[HEADER] = policy
        return response
