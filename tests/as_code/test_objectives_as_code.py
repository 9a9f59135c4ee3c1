"""Objectives in the YAML file: named by their project or tag, validated
by the admin's form (so an import accepts and refuses what the admin
and the API do), their channels per burn-rate rule by name. The export
and round trip are in test_import_export.py (its estate has two)."""

from __future__ import annotations

import pytest
import yaml

from projects.as_code.apply import import_projects
from projects.as_code.export import dump, export_yaml
from projects.as_code.plan import plan_import
from projects.models import (
    Project,
    ServiceLevelObjective,
    StatusPage,
    StatusPageSection,
)

pytestmark = pytest.mark.django_db


def test_an_objective_on_a_project_the_same_file_creates(make_channel):
    make_channel(name="pager")
    text = dump(
        {
            "version": 1,
            "projects": [{"name": "shop", "url": "http://127.0.0.1:9/"}],
            "objectives": [
                {
                    "name": "shop up",
                    "project": "shop",
                    "target_percent": 99.5,
                    "window_days": 7,
                    "page_1h_channels": ["pager"],
                }
            ],
        }
    )

    plan = import_projects(text)

    assert plan.summary() == "2 created, 0 changed, 0 disabled"
    objective = ServiceLevelObjective.objects.get(name="shop up")
    assert objective.project == Project.objects.get(name="shop")
    assert list(objective.page_1h_channels.values_list("name", flat=True)) == ["pager"]
    assert not objective.channels.exists()
    assert plan_import(text).is_empty  # imported again: nothing to do


def test_a_changed_target_is_planned_old_to_new(make_project):
    make_project(name="api")
    make_project(name="web")
    ServiceLevelObjective.objects.create(
        name="up",
        project=Project.objects.get(name="api"),
        target_percent=99,
        window_days=7,
    )
    document = yaml.safe_load(export_yaml())
    (entry,) = document["objectives"]
    entry["project"] = "web"

    plan = plan_import(dump(document))

    assert plan.lines() == ["change objective “up”", "    project: api → web"]


def test_an_objective_on_a_status_page_section_is_left_out(make_project):
    page = StatusPage.objects.create(title="Acme", slug="acme")
    section = StatusPageSection.objects.create(page=page, name="Checkout")
    ServiceLevelObjective.objects.create(
        name="checkout", section=section, target_percent=99, window_days=7
    )

    text = export_yaml()

    assert "checkout" not in text
    assert plan_import(text).is_empty
    import_projects(text)
    assert ServiceLevelObjective.objects.get(name="checkout").section == section
