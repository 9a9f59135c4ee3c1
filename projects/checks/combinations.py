"""Options of a project that make no sense together.

Each rule names the field to show the error on, so the admin puts the
message next to what the user should change.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from projects.checks.expectations import (
    is_number,
    normalized_status_codes,
    parse_expected_value,
)
from projects.checks.kinds import kind_of

NO_BODY_ON_HEAD = "A HEAD request gets no body to check: use GET."
HEARTBEAT_IS_NOT_POLLED = "A heartbeat project is not polled: {what}."
FLOW_STEPS_REQUEST = "A flow's steps make its requests: {what}."
ORDERING_OPERATORS = ("<", ">")


def coerce_field_values(instance) -> bool:
    """Give each field's value the type the field stores, as clean_fields()
    does for the values it accepts; False when some value cannot have it.

    Model.full_clean() calls clean() even when a field failed, with the raw
    value still in place (99 for a text field, "abc" for a number): rules
    across fields must not run on those, since the field's own error
    already says what is wrong.
    """
    typed = True
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if value is None:
            continue
        try:
            setattr(instance, field.attname, field.to_python(value))
        except ValidationError:
            typed = False
    return typed


def combination_errors(project) -> dict[str, str]:
    """{field name: message} for every option the others rule out."""
    errors: dict[str, str] = {}
    if project.is_heartbeat:
        return _heartbeat_errors(project)
    if project.is_flow:
        return _flow_errors(project)
    kind = kind_of(project.url) if project.url else None
    if not project.url:
        errors["url"] = "Enter the URL to poll."
    elif kind and not kind.sends_http:
        errors.update(_unused(project, kind.unused_reason))
    elif project.method == "HEAD":
        errors.update(_head_errors(project))
    errors.update(_json_errors(project))
    errors.update(_slow_errors(project))
    return errors


def _heartbeat_errors(project) -> dict[str, str]:
    errors = _unused(project, HEARTBEAT_IS_NOT_POLLED)
    if project.url:
        errors["url"] = HEARTBEAT_IS_NOT_POLLED.format(
            what="leave the URL empty; its job calls the project's ping URL"
        )
    if project.max_response_time_ms:
        errors["max_response_time_ms"] = HEARTBEAT_IS_NOT_POLLED.format(
            what="there is no response time"
        )
    return errors


def _flow_errors(project) -> dict[str, str]:
    errors = _unused(project, FLOW_STEPS_REQUEST)
    if project.url:
        errors["url"] = FLOW_STEPS_REQUEST.format(
            what="leave the URL empty; each step has its own"
        )
    if project.max_response_time_ms:
        errors["max_response_time_ms"] = FLOW_STEPS_REQUEST.format(
            what="set a slow limit on a step (expect: max_response_time_ms)"
        )
    return errors


def _unused(project, message: str) -> dict[str, str]:
    """Errors for the HTTP options set on a check that sends no request."""
    checks = {
        "keyword": (project.keyword, "there is no body to search"),
        "json_query": (project.json_query, "there is no body to query"),
        "headers": (project.headers, "it sends no headers"),
        "body": (project.body, "it sends no body"),
        "method": (project.method != "GET", "leave the method at GET"),
        "expected_status": (
            normalized_status_codes(project.expected_status) != "200",
            "there is no status code; leave it at 200",
        ),
    }
    return {
        name: message.format(what=what)
        for name, (is_set, what) in checks.items()
        if is_set
    }


def _head_errors(project) -> dict[str, str]:
    fields = ("keyword", "json_query")
    return {name: NO_BODY_ON_HEAD for name in fields if getattr(project, name)}


def _json_errors(project) -> dict[str, str]:
    query, expected = project.json_query, project.json_expected
    if expected and not query:
        return {"json_query": "Enter the query whose result is compared."}
    if query and not expected:
        return {"json_expected": "Enter the value the query's result must match."}
    if (
        query
        and project.json_operator in ORDERING_OPERATORS
        and not is_number(parse_expected_value(expected))
    ):
        return {
            "json_expected": f"{project.json_operator} compares numbers; "
            f"“{expected}” is not a number."
        }
    return {}


def _slow_errors(project) -> dict[str, str]:
    limit, timeout = project.max_response_time_ms, project.timeout_seconds
    if limit and timeout and limit >= timeout * 1000:
        return {
            "max_response_time_ms": f"Must be below the timeout ({timeout} s = "
            f"{timeout * 1000:,} ms), or the poll times out first."
        }
    return {}


def up_rules(project) -> list[str]:
    """The project's rules for "up", in words: the project page's summary."""
    if project.is_heartbeat:
        return [
            f"a ping every {project.interval_display.removeprefix('every ')}, "
            f"up to {project.grace_seconds} s late, and no failure reported"
        ]
    kind = project.check_kind
    rules = kind.up_rules(project) if kind else []
    if project.max_response_time_ms:
        rules.append(f"faster than {project.max_response_time_ms:,} ms")
    return rules
