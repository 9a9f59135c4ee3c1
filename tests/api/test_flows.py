"""projects/ with `steps`: a flow through the API, validated by the rules
the admin and the YAML import apply; a 400 names the field."""

from __future__ import annotations

import pytest

from django.test import override_settings

from projects.models import FlowStep, Project
from projects.models.teams import default_team
from tests.support.flows import SHOP_PASSWORD, contract_steps, shop_secret

URL = "/api/v1/projects/"


def flow(**changes) -> dict:
    return {
        "name": "checkout works",
        "kind": "flow",
        "interval": 60,
        "timeout_seconds": 20,
        "steps": contract_steps(),
        **changes,
    }


def test_a_flow_is_created_with_its_steps_and_shows_them(write_api):
    shop_secret()
    response = write_api.post(URL, flow(), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["steps"] == contract_steps()
    project = Project.objects.get(name="checkout works")
    assert project.kind == "flow"
    assert list(project.flow_steps.values_list("position", "name")) == [
        (1, "log in"),
        (2, "my orders"),
    ]
    shown = write_api.get(f"{URL}{project.pk}/").json()
    assert shown["steps"] == contract_steps()
    assert SHOP_PASSWORD not in str(shown)


def test_a_patch_replaces_the_steps_and_one_without_them_keeps_them(write_api):
    shop_secret()
    pk = write_api.post(URL, flow(), format="json").json()["id"]
    assert (
        write_api.patch(f"{URL}{pk}/", {"interval": 30}, format="json").json()["steps"]
        == contract_steps()
    )
    one = contract_steps()[:1]
    response = write_api.patch(f"{URL}{pk}/", {"steps": one}, format="json")
    assert response.status_code == 200, response.json()
    assert FlowStep.objects.filter(project_id=pk).count() == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"steps": []}, "A flow needs at least one step."),
        ({"kind": "poll", "url": "https://example.com/"}, "Only a flow has steps"),
        ({"steps": "login"}, ""),
    ],
)
def test_bad_steps_are_a_400_naming_steps(write_api, changes, message):
    shop_secret()
    response = write_api.post(URL, flow(**changes), format="json")
    assert response.status_code == 400
    assert "steps" in response.json()
    assert message in " ".join(response.json()["steps"])


def test_a_bad_step_is_named_with_its_field(write_api):
    shop_secret()
    steps = contract_steps()
    steps[1]["expect"] = {"status": "two hundred"}
    response = write_api.post(URL, flow(steps=steps), format="json")
    assert response.status_code == 400
    [message] = response.json()["steps"]
    assert message.startswith("step 2 'my orders': expect: status:")


def test_a_secret_the_team_lacks_is_refused(write_api):
    response = write_api.post(URL, flow(), format="json")
    assert response.status_code == 400
    assert response.json()["steps"] == [
        "No team secret is named shop_password: add it under Team secrets first."
    ]


@override_settings(POLL_BLOCKED_NETWORKS=["169.254.0.0/16"])
def test_a_step_in_a_blocked_network_is_refused(write_api, settings):
    shop_secret()
    team = default_team()
    team.trusted = False
    team.save()
    steps = contract_steps()
    steps[1]["url"] = "http://169.254.169.254/latest/meta-data/"
    response = write_api.post(URL, flow(steps=steps), format="json")
    assert response.status_code == 400
    [message] = response.json()["steps"]
    assert message.startswith("step 2 'my orders': url:")


def test_a_read_key_sees_literal_step_header_values_masked(write_api, read_api):
    shop_secret()
    pk = write_api.post(URL, flow(), format="json").json()["id"]
    login, orders = read_api.get(f"{URL}{pk}/").json()["steps"]
    assert login["headers"] == {"Content-Type": "•••"}
    assert orders["headers"] == {"Authorization": "Bearer {{token}}"}
    assert write_api.get(f"{URL}{pk}/").json()["steps"] == contract_steps()
