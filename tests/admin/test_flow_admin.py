"""A flow in the admin: its steps inline, in position order, checked by
the flow kind's rules; team secrets write-only."""

from __future__ import annotations

import json

from django.urls import reverse

from projects.models import FlowStep, Project, TeamSecret
from tests.support.admin_forms import ADD_URL, FORM
from tests.support.flows import SHOP_PASSWORD, contract_steps, shop_secret

PREFIX = "flow_steps"


def flow_form(steps: list[dict], **changes) -> dict:
    data = {
        **FORM,
        "name": "checkout works",
        "kind": "flow",
        "url": "",
        "escalations-TOTAL_FORMS": "0",
        "escalations-INITIAL_FORMS": "0",
        f"{PREFIX}-TOTAL_FORMS": str(len(steps)),
        f"{PREFIX}-INITIAL_FORMS": "0",
        **changes,
    }
    for number, step in enumerate(steps):
        for key, value in step.items():
            is_json = key in ("headers", "expect", "capture")
            data[f"{PREFIX}-{number}-{key}"] = json.dumps(value) if is_json else value
        data.setdefault(f"{PREFIX}-{number}-position", str(number + 1))
    return data


def test_it_adds_a_flow_with_its_steps_in_order(admin_client):
    shop_secret()
    steps = contract_steps()
    data = flow_form(steps)
    data[f"{PREFIX}-0-position"], data[f"{PREFIX}-1-position"] = "2", "1"
    data[f"{PREFIX}-0-name"], data[f"{PREFIX}-1-name"] = "second", "first"
    data[f"{PREFIX}-1-url"] = "https://shop.example.com/api/first"
    data[f"{PREFIX}-1-headers"] = "{}"
    response = admin_client.post(ADD_URL, data)
    assert response.status_code == 302, response.context["errors"]
    project = Project.objects.get(name="checkout works")
    assert [s.name for s in project.flow_steps.all()] == ["first", "second"]


def test_a_flow_without_steps_and_a_bad_step_are_refused(admin_client):
    response = admin_client.post(ADD_URL, flow_form([]))
    assert response.status_code == 200
    assert "A flow needs at least one step." in response.content.decode()
    steps = contract_steps()
    steps[1]["expect"] = {"status": "abc"}
    shop_secret()
    response = admin_client.post(ADD_URL, flow_form(steps))
    assert response.status_code == 200
    assert not FlowStep.objects.exists()


def test_a_team_secret_is_never_shown_again(admin_client):
    response = admin_client.post(
        reverse("admin:projects_teamsecret_add"),
        {"name": "shop_password", "value": SHOP_PASSWORD},
    )
    assert response.status_code == 302
    secret = TeamSecret.objects.get()
    assert secret.value == SHOP_PASSWORD
    change_url = reverse("admin:projects_teamsecret_change", args=[secret.pk])
    page = admin_client.get(change_url)
    assert SHOP_PASSWORD not in page.content.decode()
    # Saved with the value left empty, the stored one stays.
    admin_client.post(change_url, {"name": "shop_password", "value": ""})
    secret.refresh_from_db()
    assert secret.value == SHOP_PASSWORD


def test_a_step_reading_a_secret_the_team_lacks_is_refused(admin_client):
    response = admin_client.post(ADD_URL, flow_form(contract_steps()))
    assert response.status_code == 200
    assert "No team secret is named shop_password" in response.content.decode()
    assert not Project.objects.exists()
