"""Objectives in the admin: listed with their attainment, and a form
whose mistakes are field errors."""

from __future__ import annotations

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.models import ServiceLevelObjective

pytestmark = pytest.mark.django_db


def test_the_list_shows_each_objectives_attainment(
    admin_client, make_project, add_polls
):
    project = make_project()
    add_polls(project, "uuud", end=timezone.now())
    ServiceLevelObjective.objects.create(
        name="api", project=project, target_percent=99, window_days=7
    )

    response = admin_client.get(
        reverse("admin:projects_servicelevelobjective_changelist")
    )

    assert response.status_code == 200
    assert "75.000 %" in response.content.decode()


def test_a_latency_objective_without_a_threshold_is_a_field_error(
    admin_client, make_project
):
    project = make_project()

    response = admin_client.post(
        reverse("admin:projects_servicelevelobjective_add"),
        {
            "name": "fast",
            "project": project.pk,
            "kind": "latency",
            "target_percent": "99",
            "window_days": "30",
            "exclude_maintenance": "on",
        },
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["threshold_ms"]
    assert not ServiceLevelObjective.objects.exists()


def test_the_form_offers_a_section_and_each_rules_channels(admin_client, make_channel):
    make_channel(name="pager")

    response = admin_client.get(reverse("admin:projects_servicelevelobjective_add"))

    form = response.context["adminform"].form
    for name in (
        "section",
        "page_1h_channels",
        "page_6h_channels",
        "ticket_3d_channels",
    ):
        assert name in form.fields
        assert f'name="{name}"' in response.content.decode()
