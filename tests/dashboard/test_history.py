"""poll_history(): a project's raw polls, newest first, by keyset pages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from projects.dashboard.queries.history import poll_history

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=365)


def test_it_pages_newest_first_without_gaps_or_repeats(make_project, add_polls):
    project = make_project()
    # No ties on polled_at: one result per project and window.
    polls = add_polls(project, "ud" * 7, end=NOW, every=timedelta(minutes=1))

    seen, before = [], None
    for _ in range(10):
        page, before = poll_history(project.pk, since=LONG_AGO, before=before, size=4)
        seen += page
        if before is None:
            break

    assert [p.pk for p in seen] == [
        p.pk for p in sorted(polls, key=lambda p: (p.polled_at, p.pk), reverse=True)
    ]


def test_the_last_page_has_no_next(make_project, add_polls):
    project = make_project()
    add_polls(project, "uuu", end=NOW)

    page, before = poll_history(project.pk, since=LONG_AGO, size=3)

    assert (len(page), before) == (3, None)


def test_it_filters_by_status_and_start(make_project, add_polls):
    project = make_project()
    add_polls(project, "duduuu", end=NOW)

    page, _ = poll_history(project.pk, since=NOW - timedelta(minutes=4), status="down")

    assert [p.polled_at for p in page] == [NOW - timedelta(minutes=3)]


def test_an_unknown_status_shows_everything(make_project, add_polls):
    project = make_project()
    add_polls(project, "du", end=NOW)

    page, _ = poll_history(project.pk, since=LONG_AGO, status="sideways")

    assert len(page) == 2
