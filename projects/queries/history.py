"""One project's raw polls, newest first, a page at a time.

Pages continue from the last poll shown (keyset paging) instead of using an
offset, so the hundredth page costs what the first does.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, Subquery

from projects.models import PollResult, Status

HISTORY_PAGE_SIZE = 50


def poll_history(
    project_id: int,
    *,
    since: datetime,
    status: str = "",
    before: int | None = None,
    size: int = HISTORY_PAGE_SIZE,
) -> tuple[list[PollResult], int | None]:
    """A page of polls at or after `since`, older than the poll with id
    `before` when given, and the id to pass as `before` for the next page
    (None on the last page)."""
    polls = PollResult.objects.filter(project_id=project_id, polled_at__gte=since)
    if status in Status.values:
        polls = polls.filter(status=status)
    if before is not None:
        polls = _older_than(polls, before)
    page = list(polls.order_by("-polled_at", "-id")[: size + 1])
    if len(page) > size:
        return page[:size], page[size - 1].pk
    return page, None


def _older_than(polls, before: int):
    # Ties on polled_at (rare) are broken by id; the page is read from the
    # (project, polled_at) index, backwards.
    then = Subquery(PollResult.objects.filter(pk=before).values("polled_at"))
    return polls.filter(polled_at__lte=then).filter(
        Q(polled_at__lt=then) | Q(id__lt=before)
    )
