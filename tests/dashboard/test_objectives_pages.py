"""The objectives pages: the team's objectives with their numbers, and one
objective with its alerts; another team's objective is not found."""

from __future__ import annotations

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.models import (
    ObjectiveAlert,
    ServiceLevelObjective,
    StatusPage,
    StatusPageSection,
    Team,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def objective(make_project, add_polls):
    project = make_project(name="shop")
    add_polls(project, "uuud", end=timezone.now())
    return ServiceLevelObjective.objects.create(
        name="shop up", project=project, target_percent=99, window_days=30
    )


def test_the_list_shows_each_objectives_attainment_and_budget(admin_client, objective):
    html = admin_client.get(reverse("dashboard:objectives")).content.decode()

    assert "shop up" in html
    assert "75.000 %" in html
    assert reverse("dashboard:objective", args=[objective.pk]) in html


def test_an_objectives_page_shows_its_alerts(admin_client, objective):
    now = timezone.now()
    ObjectiveAlert.objects.create(
        objective=objective, rule="page-1h", started_at=now, burn_rate=25
    )

    response = admin_client.get(reverse("dashboard:objective", args=[objective.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "page-1h" in html
    assert "firing" in html
    assert "1 of 4 polls bad" in html


def test_another_teams_objective_is_not_found(admin_client, objective):
    other = Team.objects.create(name="other")
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(team=other)

    response = admin_client.get(reverse("dashboard:objective", args=[objective.pk]))

    assert response.status_code == 404


def test_the_overview_lists_the_objectives_least_budget_left_first(
    admin_client, make_project, add_polls, objective
):
    healthy = make_project(name="api")
    add_polls(healthy, "uuuu", end=timezone.now())
    ServiceLevelObjective.objects.create(
        name="api up", project=healthy, target_percent=99, window_days=30
    )

    html = admin_client.get(reverse("dashboard:overview")).content.decode()

    section = html[html.index('id="objectives-heading"') :]
    assert section.index("shop up") < section.index("api up")
    assert "75.000 %" in section
    assert 'class="budget-spent"' in section
    assert reverse("dashboard:objective", args=[objective.pk]) in section


def test_the_overview_has_no_objectives_section_without_objectives(
    admin_client, make_project
):
    make_project(name="shop")

    html = admin_client.get(reverse("dashboard:overview")).content.decode()

    assert 'id="objectives-heading"' not in html


def test_a_section_objective_names_its_section_and_page(admin_client, make_project):
    page = StatusPage.objects.create(title="Acme", slug="acme")
    section = StatusPageSection.objects.create(page=page, name="Checkout")
    section.projects.add(make_project(name="shop"))
    ServiceLevelObjective.objects.create(
        name="checkout up", section=section, target_percent=99, window_days=30
    )

    for url in (reverse("dashboard:objectives"), reverse("dashboard:overview")):
        html = admin_client.get(url).content.decode()
        assert "section “Checkout” of" in html, url
        assert page.get_absolute_url() in html, url
