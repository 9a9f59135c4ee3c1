"""Targets and outcomes survive the trip to an agent and back."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from polling.engine.types import DeadlineMove, JsonAssertion, Keyword, Outcome, Target
from polling.engine.wire import (
    WireError,
    outcome_from_json,
    outcome_to_json,
    target_from_json,
    target_to_json,
)

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


def test_a_target_with_every_rule_comes_back_equal():
    target = Target(
        project_id=7,
        url="https://127.0.0.1:8443/health",
        method="POST",
        headers=(("X-Token", "abc"), ("Accept", "application/json")),
        body='{"a": 1}',
        expected_status=((200, 204), (301, 301)),
        interval_seconds=30,
        timeout_seconds=5,
        trusted=True,
        max_response_time_ms=800,
        keyword=Keyword("orders", present=False, case_sensitive=True),
        json_assertion=JsonAssertion("items[0].ok", "==", [True, {"a": None}]),
        failure_threshold=3,
        last_window=T0,
    )
    back = target_from_json(through_json(target_to_json(target)))
    assert back == target
    assert back.last_window == T0  # not compared by ==


def test_an_outcome_comes_back_equal():
    outcome = Outcome(
        project_id=3,
        up=False,
        started_at=T0,
        due_at=T0,
        status_code=503,
        response_time_ms=120,
        error="HTTP 503",
        dns_ms=1,
        connect_ms=2,
        tls_ms=None,
        first_byte_ms=90,
        tls_expires_at=T0,
    )
    assert outcome_from_json(through_json(outcome_to_json(outcome))) == outcome


def test_fields_this_side_does_not_know_are_ignored():
    data = target_to_json(Target(project_id=1, url="http://127.0.0.1/"))
    data["added_by_a_newer_server"] = {"x": 1}
    assert target_from_json(data).project_id == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"started_at": "yesterday"}, "started_at: expected an ISO 8601 time"),
        ({"started_at": "2026-11-29T12:00:00"}, "started_at: expected a time with"),
        ({"project_id": "7"}, "project_id: expected an integer"),
        ({"deadline": {"to": "x"}}, "deadline: an agent does not send heartbeat"),
    ],
)
def test_a_bad_outcome_is_refused_naming_the_field(change, message):
    data = outcome_to_json(Outcome(project_id=1, up=True, started_at=T0, due_at=T0))
    with pytest.raises(WireError, match=message):
        outcome_from_json({**data, **change})


def test_a_heartbeat_outcome_is_not_sent():
    outcome = Outcome(
        project_id=1, up=False, started_at=T0, due_at=T0, deadline=DeadlineMove(T0, T0)
    )
    with pytest.raises(WireError, match="heartbeat"):
        outcome_to_json(outcome)
