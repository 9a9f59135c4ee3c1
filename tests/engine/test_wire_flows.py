"""A flow's target, with its steps and secrets, and its outcome, with
each step run, survive the trip to an agent and back."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from polling.engine.types import JsonAssertion, Keyword, Outcome, Step, StepRun, Target
from polling.engine.wire import (
    WireError,
    outcome_from_json,
    outcome_to_json,
    target_from_json,
    target_to_json,
)

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
FLOW = Target(
    project_id=9,
    url="",
    timeout_seconds=20,
    steps=(
        Step(
            name="log in",
            method="POST",
            url="https://shop.example.com/api/login",
            headers=(("Content-Type", "application/json"),),
            body='{"password": "{{secrets.shop_password}}"}',
            json_assertions=(JsonAssertion("token", "!=", None),),
            captures=(("token", "json:token"),),
        ),
        Step(
            name="my orders",
            url="https://shop.example.com/api/orders",
            headers=(("Authorization", "Bearer {{token}}"),),
            expected_status=((200, 299),),
            keyword=Keyword("orders"),
            header_rules=(("Content-Type", "json"),),
            max_response_time_ms=800,
        ),
    ),
    secrets=(("shop_password", "s3cret"),),
)


def through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


def test_a_flow_target_comes_back_equal_with_its_steps_and_secrets():
    back = target_from_json(through_json(target_to_json(FLOW)))
    assert back == FLOW
    assert back.secrets == (("shop_password", "s3cret"),)


def test_a_flow_outcome_comes_back_with_each_step_run():
    outcome = Outcome(
        project_id=9,
        up=False,
        started_at=T0,
        due_at=T0,
        status_code=401,
        error="step 2 'my orders': expected 200-299, got 401",
        steps=(
            StepRun("log in", True, 200, 40, dns_ms=1, connect_ms=2),
            StepRun("my orders", False, 401, 5, error="…", excerpt='{"e": 1}'),
        ),
    )
    assert outcome_from_json(through_json(outcome_to_json(outcome))) == outcome


def test_a_step_that_is_not_one_is_a_wire_error():
    data = through_json(target_to_json(FLOW))
    data["steps"] = ["log in"]
    with pytest.raises(WireError):
        target_from_json(data)
