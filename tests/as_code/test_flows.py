"""A flow in the YAML file: the contract's shape imports to steps and
exports back the same; a team secret is referred to, never written."""

from __future__ import annotations

import pytest
import yaml

from projects.as_code.apply import import_projects
from projects.as_code.export import export_yaml
from projects.as_code.validation import InvalidFile
from projects.models import FlowStep, Project
from tests.support.flows import (
    SHOP_PASSWORD,
    contract_steps,
    contract_yaml,
    shop_secret,
)

pytestmark = pytest.mark.django_db


def test_the_contract_imports_as_a_flow_with_its_steps():
    shop_secret()
    import_projects(contract_yaml())
    project = Project.objects.get(name="checkout works")
    assert (project.kind, project.interval, project.timeout_seconds) == ("flow", 60, 20)
    assert project.step_dicts() == contract_steps()


def test_the_export_writes_the_contract_back_without_the_secret():
    shop_secret()
    import_projects(contract_yaml())
    text = export_yaml()
    assert SHOP_PASSWORD not in text
    [entry] = yaml.safe_load(text)["projects"]
    assert entry["kind"] == "flow"
    login, orders = entry["steps"]
    # Literal header values are masked, as a project's; a value built on a
    # placeholder only refers to its secret, and is kept.
    assert login["headers"] == {"Content-Type": "•••"}
    assert orders["headers"] == {"Authorization": "Bearer {{token}}"}
    [entry] = yaml.safe_load(export_yaml(with_secrets=True))["projects"]
    assert entry["steps"] == contract_steps()
    # Imported again, nothing changes: a masked value stands for the stored one.
    plan = import_projects(text)
    assert not plan.creates
    assert not plan.changes


def test_a_changed_step_in_the_file_replaces_the_steps():
    shop_secret()
    import_projects(contract_yaml())
    import_projects(contract_yaml().replace("/api/orders", "/api/orders?all=1"))
    assert FlowStep.objects.get(name="my orders").url.endswith("?all=1")
    assert FlowStep.objects.count() == 2


def test_a_bad_step_names_the_entry_the_field_and_the_step():
    shop_secret()
    with pytest.raises(InvalidFile) as refused:
        import_projects(contract_yaml().replace('status: "200-299"', 'status: "abc"'))
    [problem] = refused.value.problems
    assert problem.where == "projects[checkout works]"
    assert problem.field == "steps"
    assert problem.message.startswith("step 2 'my orders': expect: status:")
    assert not Project.objects.exists()


def test_a_masked_step_header_with_nothing_stored_is_refused():
    shop_secret()
    text = contract_yaml().replace(
        "headers: {Content-Type: application/json}", "headers: {Content-Type: •••}"
    )
    with pytest.raises(InvalidFile) as refused:
        import_projects(text)
    [problem] = refused.value.problems
    assert problem.field == "steps"
    assert problem.message.startswith("step 1 'log in': headers: “Content-Type”")
