"""Pages: numbered for the lists (?page=2&page_size=100), by cursor for a
project's polls, which can run to millions."""

from __future__ import annotations

from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination, PageNumberPagination

from projects.api.views.params import in_utc

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

    def decode_cursor(self, request) -> Cursor | None:
        """DRF's decoding, and the position checked: DRF hands it to the
        query unread, so a crafted one ("p=notadate", or year 1 at +14:00)
        was a 500. It must be a poll time, as encode_cursor wrote it."""
        cursor = super().decode_cursor(request)
        if cursor is None or cursor.position is None:
            return cursor
        position = in_utc(cursor.position)
        if position is None:
            raise NotFound(self.invalid_cursor_message)
        return cursor._replace(position=position.isoformat())
