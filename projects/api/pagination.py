"""Pages: numbered for the lists (?page=2&page_size=100), by cursor for a
project's polls, which can run to millions."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination, PageNumberPagination

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


class PagePagination(PageNumberPagination):
    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class NewestFirstCursor(CursorPagination):
    """A project's polls, newest first; each page continues from the last
    poll's time, so the hundredth page costs what the first does."""

    ordering = "-polled_at"
    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
