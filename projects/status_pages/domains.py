"""A status page on its own domain: a request whose Host is a page's
custom_domain gets that page at / (and its feed, badge and subscription
pages beside it); every other host gets the site as usual.

Only host names that could be a custom domain (letters and dots, the
model's validator) are looked up, so 127.0.0.1, localhost and the test
client's "testserver" cost nothing; the map of domains is cached for
DOMAIN_CACHE_SECONDS, so a domain set in the admin works within that.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from projects.models import StatusPage
from projects.models.status_pages import own_host_names, validate_domain

DOMAIN_CACHE_SECONDS = 30
DOMAIN_CACHE_KEY = "status-page-domains"
DOMAIN_URLCONF = "projects.status_pages.domain_urls"


class CustomDomainMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        slug = page_for_host(request.get_host())
        if slug is not None:
            request.urlconf = DOMAIN_URLCONF
            request.status_page_slug = slug
        return self.get_response(request)


def page_for_host(host: str) -> str | None:
    """The slug of the page served on `host`, or None. Never one of the
    monitor's own names, even for a page saved with one before they were
    refused."""
    name = host.rsplit(":", 1)[0].lower() if not host.endswith("]") else host
    try:
        validate_domain(name)
    except ValidationError:
        return None
    if name in own_host_names():
        return None
    return domains().get(name)


def domains() -> dict[str, str]:
    found = cache.get(DOMAIN_CACHE_KEY)
    if found is None:
        found = dict(
            StatusPage.objects.exclude(custom_domain="").values_list(
                "custom_domain", "slug"
            )
        )
        cache.set(DOMAIN_CACHE_KEY, found, DOMAIN_CACHE_SECONDS)
    return found
