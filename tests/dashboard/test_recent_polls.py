"""latest_polls() and the recent-poll strip drawn from it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from projects.dashboard.queries.recent_polls import RecentPoll, latest_polls
from projects.dashboard.templatetags.dashboard import recent_polls_strip

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)


@pytest.mark.django_db
def test_it_returns_each_projects_latest_polls_oldest_first(make_project, add_polls):
    busy, quiet, idle = make_project(), make_project(), make_project()
    add_polls(busy, "d" + "u" * 59, end=NOW)
    add_polls(quiet, "ud", end=NOW, response_time_ms=[120, None])

    strips = latest_polls([busy.pk, quiet.pk, idle.pk], count=50)

    assert len(strips[busy.pk]) == 50
    assert strips[busy.pk][-1].polled_at == NOW
    assert strips[busy.pk][0].polled_at == NOW - timedelta(minutes=49)
    assert strips[quiet.pk] == [
        RecentPoll(NOW - timedelta(minutes=1), "up", 200, 120, ""),
        RecentPoll(NOW, "down", 503, None, "expected 200, got 503"),
    ]
    assert strips[idle.pk] == []


@pytest.mark.django_db
def test_a_page_of_projects_costs_one_query(
    make_project, add_polls, django_assert_num_queries
):
    projects = [make_project() for _ in range(12)]
    for project in projects:
        add_polls(project, "ud" * 30, end=NOW)

    with django_assert_num_queries(1):
        strips = latest_polls([p.pk for p in projects])

    assert {len(strip) for strip in strips.values()} == {50}


@pytest.mark.django_db
def test_no_projects_cost_no_query(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert latest_polls([]) == {}


def beat(status: str, **fields) -> RecentPoll:
    values = {"status_code": 200, "response_time_ms": 87, "error": ""} | fields
    return RecentPoll(NOW, status, **values)


def test_the_strip_has_a_slot_per_poll_and_pads_on_the_left():
    html = recent_polls_strip(
        [beat("up"), beat("down", status_code=None, error="refused")]
    )

    assert re.findall(r'class="hb hb-(\w+)"', html) == ["none"] * 48 + ["up", "down"]
    assert 'aria-label="Last 2 polls: 1 up, 1 down"' in html


def test_each_bar_has_a_tooltip_with_time_code_and_error():
    html = recent_polls_strip(
        [beat("down", status_code=None, response_time_ms=None, error="timed out")]
    )

    assert 'title="Nov 22 12:30:00 · Down · no response · timed out"' in html
    assert 'title="Nov 22 12:30:00 · Up · 200 · 87 ms"' in recent_polls_strip(
        [beat("up")]
    )


def test_tooltips_are_escaped():
    html = recent_polls_strip([beat("down", error='<script>"x"</script>')])

    assert "<script>" not in html
    assert "&lt;script&gt;&quot;x&quot;" in html


def test_a_project_without_polls_gets_an_empty_strip():
    html = recent_polls_strip([])

    assert html.count("hb-none") == 50
    assert 'aria-label="No polls yet"' in html
