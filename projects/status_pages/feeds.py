"""/status/<slug>/feed.atom: the page's events (projects.announcements.events)
as an Atom feed, through Django's syndication framework. A private page's
feed is for its team (projects.status_pages.access) and kept out of
shared caches."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.syndication.views import Feed
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.utils.feedgenerator import Atom1Feed

from projects.announcements.events import Event, page_events
from projects.announcements.subscriptions import absolute
from projects.models import StatusPage
from projects.notifications.markdown import render_markdown
from projects.status_pages.access import cache_scope, refusal

MAX_FEED_ITEMS = 50


@dataclass(frozen=True, slots=True)
class Item:
    event: Event
    page_url: str


class PageFeed(Feed):
    feed_type = Atom1Feed

    def __call__(self, request, *args, **kwargs):
        page = get_object_or_404(StatusPage, slug=kwargs.get("slug"))
        if (refused := refusal(request, page)) is not None:
            return refused
        response = super().__call__(request, *args, **kwargs)
        if not page.is_public:
            patch_cache_control(response, no_cache=True, **cache_scope(page))
        return response

    def get_object(self, request, slug: str) -> StatusPage:
        return get_object_or_404(StatusPage, slug=slug)

    def title(self, page: StatusPage) -> str:
        return page.title

    def subtitle(self, page: StatusPage) -> str:
        return page.description

    def link(self, page: StatusPage) -> str:
        return page.get_absolute_url()

    def feed_guid(self, page: StatusPage) -> str:
        # RFC 4287 4.2.6: an absolute IRI that never changes, so from
        # SITE_URL, not from whichever host name the feed was read under.
        return absolute(page.get_absolute_url())

    def author_name(self, page: StatusPage) -> str:
        return page.title  # 4.1.1: a feed has an author (its entries none)

    def items(self, page: StatusPage) -> list[Item]:
        now = timezone.now()
        since = now - timedelta(days=page.show_uptime_days)
        url = page.get_absolute_url()
        return [Item(e, url) for e in page_events(page, since, now)[:MAX_FEED_ITEMS]]

    def item_title(self, item: Item) -> str:
        return item.event.title

    def item_description(self, item: Item) -> str:
        return render_markdown(item.event.text)

    def item_link(self, item: Item) -> str:
        return item.page_url

    def item_guid(self, item: Item) -> str:
        return f"{absolute(item.page_url)}#{item.event.key}"

    item_guid_is_permalink = False

    def item_pubdate(self, item: Item):
        return item.event.at

    def item_updateddate(self, item: Item):
        return item.event.at
