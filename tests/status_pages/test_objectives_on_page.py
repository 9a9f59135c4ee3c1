"""Objectives on a public status page: shown only when the page's owner
turned show_objectives on, each under its section (an objective on the
section itself, or on one of the section's projects), with its
attainment and the budget left; never another team's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from django.core.exceptions import ValidationError

from projects.models import (
    DailyRollup,
    ServiceLevelObjective,
    StatusPage,
    StatusPageSection,
    Tag,
    Team,
)
from projects.objectives.status import objective_status
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def page_with_objectives():
    built = build_page(projects=4, sections=2, days=8, with_incident=False)
    first, second = built.page.sections.order_by("position")
    # A bad day in the section's window: 144 of 1,440 polls failed.
    in_first = first.projects.order_by("pk").first()
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    DailyRollup.objects.filter(project=in_first, day=yesterday).update(failures=144)
    on_section = ServiceLevelObjective.objects.create(
        name="checkout availability", section=first, target_percent=99.5, window_days=7
    )
    on_project = ServiceLevelObjective.objects.create(
        name="search availability",
        project=second.projects.order_by("pk").first(),
        target_percent=99,
        window_days=7,
    )
    other_team = Team.objects.create(name="Other", slug="other")
    ServiceLevelObjective.objects.create(
        team=other_team,
        name="someone else's target",
        project=in_first,
        target_percent=90,
        window_days=7,
    )
    return built.page, on_section, on_project


def sections_of(html: str) -> list[str]:
    return re.findall(r'<section class="section".*?</section>', html, re.S)


def test_a_page_shows_no_objective_unless_its_owner_chose_to(
    client, page_with_objectives
):
    html = client.get("/status/acme/").content.decode()

    assert "availability" not in html
    assert 'class="objectives"' not in html


def test_each_section_shows_its_objectives_attainment_and_budget_left(
    client, page_with_objectives
):
    page, on_section, _ = page_with_objectives
    StatusPage.objects.filter(pk=page.pk).update(show_objectives=True)

    first, second = sections_of(client.get("/status/acme/").content.decode())

    status = objective_status(on_section, datetime.now(UTC))
    assert status.counts.bad >= 144  # the day of failures is in its window
    assert "checkout availability" in first
    assert "search availability" not in first
    assert "search availability" in second
    row = re.search(r"<tr class=\"missed\"><th scope=\"row\">checkout.*?</tr>", first)
    assert row, first
    assert f"{status.attainment_percent:.3f} %" in row.group(0)
    assert "99.5 % over 7 days" in row.group(0)
    # Spent: a budget left below 0 shows as 0 %.
    assert status.error_budget_remaining_percent < 0
    assert row.group(0).endswith("<td>0 %</td></tr>")
    assert '<tr class="met"><th scope="row">search availability' in second


def test_another_teams_objective_on_a_shown_project_stays_off_the_page(
    client, page_with_objectives
):
    page, *_ = page_with_objectives
    StatusPage.objects.filter(pk=page.pk).update(show_objectives=True)

    html = client.get("/status/acme/").content.decode()

    assert "someone else" not in html


def test_a_sections_objective_counts_its_chosen_and_tagged_projects():
    built = build_page(projects=3, sections=1, days=3, with_incident=False)
    section = built.page.sections.get()
    tag = Tag.objects.create(name="edge")
    extra = build_page(projects=1, sections=1, days=3, slug="x", with_incident=False)
    extra.projects[0].tags.add(tag)
    StatusPageSection.objects.filter(pk=section.pk).update(tag=tag)
    section.refresh_from_db()
    objective = ServiceLevelObjective.objects.create(
        name="all of it", section=section, target_percent=99, window_days=7
    )

    status = objective_status(objective, datetime.now(UTC))

    # Two whole days and this morning's hour for each of four projects.
    assert status.counts.total == 4 * (2 * 1440 + 60)


def test_a_section_of_another_teams_page_is_refused():
    other = Team.objects.create(name="Other", slug="other")
    page = StatusPage.objects.create(team=other, title="Theirs", slug="theirs")
    section = StatusPageSection.objects.create(page=page, name="Theirs")
    objective = ServiceLevelObjective(name="x", section=section, target_percent=99)
    objective.window_days = 7

    with pytest.raises(ValidationError) as refused:
        objective.full_clean()

    assert "section" in refused.value.message_dict


def test_a_section_and_a_project_together_are_refused(make_project):
    built = build_page(projects=1, sections=1, days=2, with_incident=False)
    objective = ServiceLevelObjective(
        name="x",
        section=built.page.sections.get(),
        project=make_project(),
        target_percent=99,
        window_days=7,
    )

    with pytest.raises(ValidationError) as refused:
        objective.full_clean()

    assert refused.value.message_dict == {
        "section": ["Choose a project, a tag or a section, not several."]
    }
