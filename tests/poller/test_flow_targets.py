"""A flow as the poller loads it: its steps as engine Steps, only the
secrets they read, and a changed secret read again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

from polling.engine.types import JsonAssertion, Keyword
from polling.store import load_targets
from polling.store.targets import NO_STEPS, load_changes
from projects.models import Project, TeamSecret
from projects.models.teams import default_team
from tests.support.flows import SHOP_PASSWORD, contract_steps, shop_secret

pytestmark = pytest.mark.django_db


@pytest.fixture
def checkout() -> Project:
    shop_secret()
    TeamSecret.objects.create(team=default_team(), name="unused", value="other")
    project = Project(name="checkout works", kind=Project.Kind.FLOW)
    project.steps_to_save = contract_steps()
    project.full_clean()
    project.save()
    return project


def test_a_flow_loads_its_steps_and_only_the_secrets_they_read(checkout):
    [target] = load_targets([checkout.pk])
    login, orders = target.steps
    assert target.problem == ""
    assert target.secrets == (("shop_password", SHOP_PASSWORD),)
    assert SHOP_PASSWORD not in repr(target)
    assert login.json_assertions == (JsonAssertion("token", "!=", None),)
    assert login.captures == (("token", "json:token"),)
    assert orders.expected_status == ((200, 299),)
    assert orders.keyword == Keyword("orders")
    assert orders.max_response_time_ms == 800


def test_a_flow_without_steps_fails_every_poll_saying_why(checkout):
    checkout.flow_steps.all().delete()
    [target] = load_targets([checkout.pk])
    assert target.problem == NO_STEPS


def test_a_changed_secret_marks_the_teams_flows_changed(checkout):
    since = timezone.now() + timedelta(microseconds=1)
    secret = TeamSecret.objects.get(name="shop_password")
    secret.value = "a-new-one"
    secret.save()
    _, targets = load_changes(since, known=lambda pk: True)
    assert [t.secrets for t in targets] == [(("shop_password", "a-new-one"),)]
