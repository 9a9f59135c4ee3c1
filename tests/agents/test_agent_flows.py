"""A flow polled by an agent: its sync carries the steps and the secrets
they read, and the step runs it sends back are stored with the poll."""

from __future__ import annotations

import json

import pytest

from django.test import Client
from django.utils import timezone

from polling.engine.types import Outcome, StepRun
from polling.engine.wire import outcome_to_json, target_from_json
from projects.models import Agent, PollResult, Project, Region
from tests.support.flows import SHOP_PASSWORD, contract_steps, shop_secret

pytestmark = pytest.mark.django_db


def post(client: Client, token: str, path: str, body: dict):
    return client.post(
        f"/api/v1/agent/{path}",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.fixture
def flow() -> Project:
    shop_secret()
    project = Project(name="checkout works", kind=Project.Kind.FLOW)
    project.steps_to_save = contract_steps()
    project.full_clean()
    project.save()
    return project


def test_an_agent_gets_a_flow_with_its_steps_and_secrets(flow):
    _, token = Agent.issue("a1", Region.objects.create(name="office"))

    answer = post(Client(), token, "sync/", {})

    assert answer.status_code == 200
    [data] = answer.json()["targets"]
    target = target_from_json(data)
    assert [step.name for step in target.steps] == ["log in", "my orders"]
    assert target.secrets == (("shop_password", SHOP_PASSWORD),)


def test_the_step_runs_an_agent_sends_are_stored(flow):
    _, token = Agent.issue("a1", Region.objects.create(name="office"))
    at = timezone.now().replace(microsecond=0)
    failed = "step 2 'my orders': expected 200-299, got 401"
    outcome = Outcome(
        project_id=flow.pk,
        up=False,
        started_at=at,
        due_at=at,
        status_code=401,
        error=failed,
        steps=(
            StepRun("log in", True, 200, 40),
            StepRun("my orders", False, 401, 5, error=failed, excerpt="expired"),
        ),
    )

    answer = post(Client(), token, "results/", {"outcomes": [outcome_to_json(outcome)]})

    assert answer.json()["saved"] == 1
    steps = PollResult.objects.get(project=flow).steps
    assert [(s["name"], s["up"]) for s in steps] == [
        ("log in", True),
        ("my orders", False),
    ]
    assert steps[1]["excerpt"] == "expired"
