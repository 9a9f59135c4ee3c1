"""objectives/: objectives made through the admin's form, listed with
their attainment, error budget and burn rate."""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.models import ServiceLevelObjective

URL = "/api/v1/objectives/"


def test_an_objective_is_made_and_listed_with_its_numbers(
    write_api, make_project, add_polls
):
    project = make_project()
    add_polls(project, "u" * 98 + "dd", end=timezone.now())

    made = write_api.post(
        URL,
        {
            "name": "api",
            "project": project.pk,
            "kind": "availability",
            "target_percent": 99,
            "window_days": 7,
        },
        format="json",
    )

    assert made.status_code == 201, made.json()
    [item] = write_api.get(URL).json()["results"]
    assert item["name"] == "api"
    assert item["attainment_percent"] == pytest.approx(98)
    assert item["error_budget_remaining_percent"] == pytest.approx(-100)
    # The last hour: 2 bad polls of about 60, against a budget of 1 %.
    assert item["burn_rate_1h"] == pytest.approx(2 / 60 / 0.01, rel=0.03)
    assert item["window_days"] == 7
    assert item["calendar_month"] is False
    assert ServiceLevelObjective.objects.get().team == project.team


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "latency"}, "threshold_ms"),
        ({"window_days": 14}, "window_days"),
        ({"target_percent": 120}, "target_percent"),
        ({"kind": "speed"}, "kind"),
    ],
)
def test_a_bad_objective_is_a_400_naming_the_field(
    write_api, make_project, changes, field
):
    project = make_project()
    body = {"name": "x", "project": project.pk, "target_percent": 99.9}
    body["window_days"] = 30

    response = write_api.post(URL, {**body, **changes}, format="json")

    assert response.status_code == 400
    assert field in response.json()


def test_each_burn_rate_rule_takes_its_own_channels(
    write_api, make_project, make_channel
):
    project = make_project()
    every, pager = make_channel(name="every"), make_channel(name="pager")

    made = write_api.post(
        URL,
        {
            "name": "api",
            "project": project.pk,
            "target_percent": 99.9,
            "window_days": 30,
            "channels": [every.pk],
            "page_1h_channels": [pager.pk],
        },
        format="json",
    )

    assert made.status_code == 201, made.json()
    item = made.json()
    assert item["channels"] == [every.pk]
    assert item["page_1h_channels"] == [pager.pk]
    assert item["page_6h_channels"] == []
    assert item["ticket_3d_channels"] == []


def test_an_objective_on_a_status_page_section(write_api):
    from projects.models import StatusPage, StatusPageSection

    page = StatusPage.objects.create(title="Acme", slug="acme")
    section = StatusPageSection.objects.create(page=page, name="Checkout")

    made = write_api.post(
        URL,
        {
            "name": "checkout",
            "section": section.pk,
            "target_percent": 99,
            "window_days": 7,
        },
        format="json",
    )

    assert made.status_code == 201, made.json()
    assert made.json()["section"] == section.pk
    assert ServiceLevelObjective.objects.get().section == section


def test_a_project_and_a_section_together_are_a_400(write_api, make_project):
    from projects.models import StatusPage, StatusPageSection

    page = StatusPage.objects.create(title="Acme", slug="acme")
    section = StatusPageSection.objects.create(page=page, name="Checkout")

    response = write_api.post(
        URL,
        {
            "name": "x",
            "project": make_project().pk,
            "section": section.pk,
            "target_percent": 99,
            "window_days": 7,
        },
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["section"] == [
        "Choose a project, a tag or a section, not several."
    ]
