"""Flows through the whole poller, against a real shop API on 127.0.0.1
that issues and checks tokens: the project row and its steps, one poll
on the engine, the stored result with each step, the incident that
names the failing step; and the team secret nowhere but in the request."""

from __future__ import annotations

import logging

import pytest

from django.apps import apps

from projects.as_code.export import export_yaml
from projects.models import Incident, Notification, PollResult, Project, TeamSecret
from tests.support.flows import contract_steps, shop_secret
from tests.support.shop_server import ShopServer
from tests.support.waiting import wait_until

PASSWORD = "correct-horse-battery-9917"


@pytest.fixture
def shop():
    with ShopServer(PASSWORD) as server:
        yield server


@pytest.fixture
def poll_flow(running_poller):
    """Save the contract's flow against the shop, let the running poller
    poll it once, return the result."""

    def poll(shop: ShopServer, password: str = PASSWORD) -> PollResult:
        shop_secret(value=password)
        project = Project(
            name="checkout works",
            kind=Project.Kind.FLOW,
            interval=1,
            interval_unit="hours",
            timeout_seconds=20,
            failure_threshold=1,
        )
        project.steps_to_save = contract_steps(shop.base)
        project.full_clean()
        project.save()
        running_poller.coordinator.sync_project(project.pk)
        results = PollResult.objects.filter(project=project)
        wait_until(results.exists)
        return results.get()

    return poll


def test_login_then_token_then_orders_passes_with_each_step_stored(poll_flow, shop):
    result = poll_flow(shop)

    assert (result.status, result.status_code, result.error_message) == (
        "up",
        200,
        "",
    )
    assert [(s["name"], s["up"], s["status_code"]) for s in result.steps] == [
        ("log in", True, 200),
        ("my orders", True, 200),
    ]
    assert all(s["ms"] is not None and s["connect"] is not None for s in result.steps)
    [(_, _, login_body), (_, orders_headers, _)] = shop.requests
    assert PASSWORD in login_body
    assert orders_headers["Authorization"].removeprefix("Bearer ") in shop.tokens


def test_a_wrong_password_fails_at_step_1(poll_flow, shop):
    result = poll_flow(shop, password="an-old-password")

    assert result.status == "down"
    assert result.error_message == "step 1 'log in': expected 200, got 401"
    [login] = result.steps
    assert "wrong user or password" in login["excerpt"]
    assert len(shop.requests) == 1


def test_an_expired_token_fails_at_step_2_and_its_incident_names_it(poll_flow, shop):
    shop.tokens_expire = True

    result = poll_flow(shop)

    assert result.error_message == "step 2 'my orders': expected 200-299, got 401"
    assert result.status_code == 401
    login, orders = result.steps
    assert login["up"]
    assert not orders["up"]
    assert '"token expired"' in orders["excerpt"]
    incident = Incident.objects.get(project=result.project)
    assert incident.title == "checkout works: step 2 'my orders' failed"
    assert incident.first_error == result.error_message


def test_the_secret_is_in_no_row_log_line_payload_or_export(
    poll_flow, shop, make_channel, caplog
):
    make_channel(is_default=True)
    caplog.set_level(logging.DEBUG)
    # The shop wants another password: it refuses the one sent and echoes
    # it, in the response whose excerpt is kept for the incident.
    shop.password = "the-shop-wants-another"

    result = poll_flow(shop)

    assert result.status == "down"
    assert "••••" in result.steps[0]["excerpt"]
    wait_until(Notification.objects.exists)
    stored = [
        repr(row)
        for model in apps.get_models()
        if model is not TeamSecret and model._meta.managed
        for row in model.objects.values()
    ]
    assert stored
    assert not [row for row in stored if PASSWORD in row]
    assert PASSWORD not in caplog.text
    assert PASSWORD not in export_yaml()
    payloads = Notification.objects.values_list("payload", flat=True)
    assert "checkout works: step 1 'log in' failed" in repr(list(payloads))
