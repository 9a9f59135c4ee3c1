"""One project's raw polls, newest first, a page at a time.

Pages continue from the last poll shown (keyset paging) instead of using an
offset, so the hundredth page costs what the first does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from projects.models import PollResult, Status

HISTORY_PAGE_SIZE = 50
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def poll_history(
    project_id: int,
    *,
    since: datetime,
    status: str = "",
    before: int | None = None,
    size: int = HISTORY_PAGE_SIZE,
) -> tuple[list[PollResult], int | None]:
    """A page of polls at or after `since`, older than `before` when given,
    and the `before` for the next page (None on the last page).

    `before` is a poll's time as microseconds since the epoch: a project
    has one poll at a time (its primary key), so the time alone says where
    a page ends.
    """
    polls = PollResult.objects.filter(project_id=project_id, polled_at__gte=since)
    if status in Status.values:
        polls = polls.filter(status=status)
    if before is not None:
        polls = polls.filter(polled_at__lt=from_microseconds(before))
    page = list(polls.order_by("-polled_at")[: size + 1])
    if len(page) > size:
        return page[:size], to_microseconds(page[size - 1].polled_at)
    return page, None


def to_microseconds(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)


def from_microseconds(microseconds: int) -> datetime:
    return EPOCH + timedelta(microseconds=microseconds)
