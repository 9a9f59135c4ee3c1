"""The status page: /status/<slug>/, or / on the page's own domain.

A rendered page is cached for at most PAGE_CACHE_SECONDS under its
version (projects.status_pages.version), so a change shows on the next
request and a quiet page costs one small query; the version is the ETag,
and a conditional request that matches gets a 304 without rendering.
"""

from __future__ import annotations

import gzip

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import http_date, parse_etags, parse_http_date_safe

from projects.models import StatusPage
from projects.status_pages import content
from projects.status_pages.access import cache_scope, refusal
from projects.status_pages.rendering import gzipped_page
from projects.status_pages.version import page_version

PAGE_CACHE_SECONDS = 30


def status_page(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(StatusPage, slug=slug)
    return render_page(request, page, base=page.get_absolute_url())


def render_page(request: HttpRequest, page: StatusPage, *, base: str) -> HttpResponse:
    """The page, its links relative to `base` (its /status/<slug>/ URL, or
    / on its own domain)."""
    if (refused := refusal(request, page)) is not None:
        return refused
    version = page_version(page, timezone.now())
    key = f"status-page:{page.pk}:{base}:{version}"
    cached = cache.get(key)
    if cached is None:
        cached = build(page, base)
        cache.set(key, cached, PAGE_CACHE_SECONDS)
    etag, built_at, compressed = cached
    if not_modified(request, etag, built_at):
        response = HttpResponseNotModified()
    elif accepts_gzip(request):
        response = HttpResponse(compressed)
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(compressed))
    patch_vary_headers(response, ["Accept-Encoding"])
    response["ETag"] = etag
    response["Last-Modified"] = http_date(built_at)
    patch_cache_control(response, no_cache=True, **cache_scope(page))
    return response


def not_modified(request: HttpRequest, etag: str, built_at: float) -> bool:
    if "If-None-Match" in request.headers:
        return etag in parse_etags(request.headers["If-None-Match"])
    since = parse_http_date_safe(request.headers.get("If-Modified-Since", ""))
    return since is not None and int(built_at) <= since


def accepts_gzip(request: HttpRequest) -> bool:
    return "gzip" in request.headers.get("Accept-Encoding", "").lower()


def build(page: StatusPage, base: str) -> tuple[str, float, bytes]:
    """(ETag, when, gzipped HTML). Rendered without the request: the
    cached HTML is the same for every visitor, so it holds no CSRF token
    or user name. Kept gzipped: a page of 500 projects over 90 days is 4
    MB of cells that repeat, and about a twentieth of that compressed."""
    now = timezone.now()
    compressed = gzipped_page(page, content.load(page, now), base)
    etag = f'"{page.pk}-{now.timestamp():.6f}"'
    return etag, now.timestamp(), compressed


def domain_page(request: HttpRequest) -> HttpResponse:
    """/ on a page's custom domain (projects.status_pages.domains)."""
    page = get_object_or_404(StatusPage, slug=request.status_page_slug)
    return render_page(request, page, base="/")
