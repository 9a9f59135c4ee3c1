"""Targets and outcomes as JSON, for agents: the server sends an agent
the targets it polls and the agent sends back the outcomes
(polling/agents/). No Django here: the agent runs the engine without a
database, and the server reads what the agent wrote with the same code.

Every field of Target and Outcome travels; datetimes as ISO 8601 in UTC.
A flow's steps and the team secrets they read travel with its target (the
agent runs the flow, over HTTPS), and each step run with its outcome.
A field this side does not know is ignored, and one it lacks takes the
dataclass's default, so a server and an agent one version apart still
understand each other.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from polling.engine.types import (
    OK_STATUS,
    HeaderAssertion,
    JsonAssertion,
    Keyword,
    Outcome,
    Step,
    StepRun,
    Target,
)

_TARGET_FIELDS = {f.name for f in dataclasses.fields(Target)}
_OUTCOME_FIELDS = {f.name for f in dataclasses.fields(Outcome)}
_STEP_FIELDS = {f.name for f in dataclasses.fields(Step)}
_STEP_RUN_FIELDS = {f.name for f in dataclasses.fields(StepRun)}
_TARGET_TIMES = ("ping_deadline", "last_window")
_OUTCOME_TIMES = ("started_at", "due_at", "tls_expires_at")


class WireError(ValueError):
    """What was sent is not a target or an outcome; the message says which
    field and what was expected."""


def target_to_json(target: Target) -> dict[str, Any]:
    data = {f: getattr(target, f) for f in _TARGET_FIELDS}
    data["headers"] = [list(pair) for pair in target.headers]
    data["expected_status"] = [list(pair) for pair in target.expected_status]
    data["keyword"] = target.keyword and dataclasses.asdict(target.keyword)
    data["json_assertion"] = target.json_assertion and dataclasses.asdict(
        target.json_assertion
    )
    data["header_assertions"] = [
        dataclasses.asdict(assertion) for assertion in target.header_assertions
    ]
    data["payload"] = target.payload.hex()  # bytes travel as hex digits
    for name in _TARGET_TIMES:
        data[name] = _time_to_json(data[name])
    data["steps"] = [dataclasses.asdict(step) for step in target.steps]
    data["secrets"] = [list(pair) for pair in target.secrets]
    return data


def target_from_json(data: dict[str, Any]) -> Target:
    values = _known(data, _TARGET_FIELDS, "target")
    try:
        values["headers"] = tuple(
            (str(name), str(value)) for name, value in values.get("headers", ())
        )
        values["expected_status"] = (
            tuple(
                (int(low), int(high)) for low, high in values.get("expected_status", ())
            )
            or Target.expected_status
        )
        if values.get("keyword"):
            values["keyword"] = Keyword(**values["keyword"])
        if values.get("json_assertion"):
            values["json_assertion"] = JsonAssertion(**values["json_assertion"])
        values["header_assertions"] = tuple(
            HeaderAssertion(**assertion)
            for assertion in values.get("header_assertions", ())
        )
        values["payload"] = bytes.fromhex(values.get("payload", ""))
        values["dns_answers"] = tuple(
            str(answer) for answer in values.get("dns_answers", ())
        )
        for name in _TARGET_TIMES:
            values[name] = _time_from_json(values.get(name), name)
        values["steps"] = tuple(_step_from_json(s) for s in values.get("steps") or ())
        values["secrets"] = _pairs(values.get("secrets"))
        return Target(**values)
    except (TypeError, ValueError) as error:
        raise WireError(f"not a target: {error}") from error


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    data = {f: getattr(outcome, f) for f in _OUTCOME_FIELDS}
    for name in _OUTCOME_TIMES:
        data[name] = _time_to_json(data[name])
    data["steps"] = [dataclasses.asdict(run) for run in outcome.steps]
    if outcome.deadline is not None:  # heartbeats are the server's own
        raise WireError("an agent does not send heartbeat deadlines")
    return data


def outcome_from_json(data: dict[str, Any]) -> Outcome:
    values = _known(data, _OUTCOME_FIELDS, "outcome")
    if values.pop("deadline", None) is not None:
        raise WireError("deadline: an agent does not send heartbeat deadlines")
    try:
        for name in _OUTCOME_TIMES:
            values[name] = _time_from_json(values.get(name), name)
        if values.get("rtt_us") is not None:
            values["rtt_us"] = tuple(int(us) for us in values["rtt_us"])
        values["steps"] = tuple(
            StepRun(**_known(run, _STEP_RUN_FIELDS, "step run"))
            for run in values.get("steps") or ()
        )
        outcome = Outcome(**values)
    except (TypeError, ValueError) as error:
        raise WireError(f"not an outcome: {error}") from error
    if not isinstance(outcome.project_id, int) or isinstance(outcome.project_id, bool):
        raise WireError("project_id: expected an integer")
    if outcome.started_at is None or outcome.due_at is None:
        raise WireError("started_at and due_at: expected ISO 8601 times")
    return outcome


def _step_from_json(data: object) -> Step:
    values = _known(data, _STEP_FIELDS, "step")
    values["headers"] = _pairs(values.get("headers"))
    values["expected_status"] = (
        tuple((int(low), int(high)) for low, high in values.get("expected_status", ()))
        or OK_STATUS
    )
    if values.get("keyword"):
        values["keyword"] = Keyword(**values["keyword"])
    values["json_assertions"] = tuple(
        JsonAssertion(**rule) for rule in values.get("json_assertions") or ()
    )
    values["header_rules"] = _pairs(values.get("header_rules"))
    values["captures"] = _pairs(values.get("captures"))
    return Step(**values)


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), str(text)) for name, text in value or ())


def _known(data: object, fields: set[str], what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise WireError(f"a {what} is a JSON object")
    return {key: value for key, value in data.items() if key in fields}


def _time_to_json(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _time_from_json(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise WireError(f"{name}: expected an ISO 8601 time")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise WireError(f"{name}: expected an ISO 8601 time, got {value!r}") from None
    if parsed.tzinfo is None:
        raise WireError(f"{name}: expected a time with its zone")
    return parsed.astimezone(UTC)
