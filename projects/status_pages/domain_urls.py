"""The URLs of a status page served on its own domain; everything else on
that host resolves as on any other."""

from __future__ import annotations

from functools import wraps

from django.urls import path

from monitor.urls import urlpatterns as site_urlpatterns
from projects.status_pages import badge_views, subscriptions, views
from projects.status_pages.feeds import PageFeed


def for_this_domain(view):
    @wraps(view)
    def on_domain(request, **kwargs):
        return view(request, slug=request.status_page_slug, **kwargs)

    return on_domain


urlpatterns = [
    path("", views.domain_page, name="status_page_home"),
    path("badge.svg", for_this_domain(badge_views.page_badge)),
    path("feed.atom", for_this_domain(PageFeed())),
    path("subscribe/", for_this_domain(subscriptions.subscribe)),
    *site_urlpatterns,
]
