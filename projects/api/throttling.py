"""At most API_THROTTLE requests per key (DRF's rate syntax, e.g. 600/min),
counted in Django's cache; beyond it 429 with Retry-After."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from django.conf import settings


class ApiKeyThrottle(SimpleRateThrottle):
    scope = "api_key"

    def get_rate(self) -> str:
        # Read at run time, so a changed setting (or a test's) applies.
        return settings.API_THROTTLE

    def get_cache_key(self, request: Request, view) -> str | None:
        if request.auth is None:
            return None  # no key: the permission refuses it first
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}
