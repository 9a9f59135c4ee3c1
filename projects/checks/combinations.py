"""Options of a project that make no sense together.

Each rule names the field to show the error on, so the admin puts the
message next to what the user should change.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from projects.checks.domain_names import domain_problem, target_host
from projects.checks.expectations import (
    is_number,
    normalized_status_codes,
    parse_expected_value,
)
from projects.checks.kinds import KIND_OPTIONS, kind_of, kinds_using
from projects.checks.kinds.dns import normalized_answers, record_type
from projects.checks.validators import validate_regex

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
    errors: dict[str, str] = _domain_errors(project)
    if project.is_heartbeat:
        errors.update(_other_kinds_options(project, None))
        return {**errors, **_heartbeat_errors(project)}
    if project.is_flow:
        return {
            **errors,
            **_other_kinds_options(project, None),
            **_flow_errors(project),
        }
    kind = kind_of(project.url) if project.url else None
    errors.update(_other_kinds_options(project, kind))
    errors.update(_reply_errors(project, kind))
    errors.update(_dns_errors(project, kind))
    if not project.url:
        errors["url"] = "Enter the URL to poll."
    elif kind and not kind.sends_http:
        errors.update(_unused(project, kind.unused_reason))
    elif project.method == "HEAD":
        errors.update(_head_errors(project))
    errors.update(_json_errors(project))
    errors.update(_slow_errors(project))
    return errors


def _other_kinds_options(project, kind) -> dict[str, str]:
    """Errors for the options of other kinds set on this project."""
    errors = {}
    mine = kind.options if kind else ()
    for name in KIND_OPTIONS:
        field = project._meta.get_field(name)
        if name in mine or getattr(project, name) == field.get_default():
            continue
        labels = " and ".join(other.label for other in kinds_using(name))
        this = f"this is {_a(kind.label)} check" if kind else _THIS_IS_HEARTBEAT
        if kind is None and not project.is_heartbeat:
            this = "the URL chooses no such check"
        errors[name] = f"Only {labels} checks use this; {this}."
    return errors


_THIS_IS_HEARTBEAT = "this is a heartbeat project"


def _a(label: str) -> str:
    return ("an " if label[0] in "AEFHILMNORSX" else "a ") + label


NO_DOMAIN = "No domain registration to watch: {problem}; leave this empty."


def _domain_errors(project) -> dict[str, str]:
    """A domain expiry warning needs a host name under a public suffix."""
    if project.domain_expiry_warning_days is None:
        return {}
    if project.is_heartbeat:
        problem = "a heartbeat project has no host name"
    elif project.is_flow:
        problem = "a flow has no URL of its own"
    elif not project.url or kind_of(project.url) is None:
        return {}  # the URL's own error says what is wrong
    else:
        problem = domain_problem(target_host(project.url))
    if not problem:
        return {}
    return {"domain_expiry_warning_days": NO_DOMAIN.format(problem=problem)}


def _reply_errors(project, kind) -> dict[str, str]:
    if kind is None or (
        "udp_payload" not in kind.options and "expected_reply" not in kind.options
    ):
        return {}
    errors = {}
    if "udp_payload" in kind.options:
        if not project.udp_payload:
            errors["udp_payload"] = (
                "A UDP check needs a payload: what to send, e.g. a status request."
            )
        elif project.udp_payload_hex and not _is_hex(project.udp_payload):
            errors["udp_payload"] = (
                "“Payload is hex” is on, but this is not hex digits: "
                "write bytes as 1b 00 ff."
            )
    if project.expected_reply and project.expected_reply_mode == "regex":
        try:
            validate_regex(project.expected_reply)
        except ValidationError as error:
            errors["expected_reply"] = error.messages[0]
    return errors


def _dns_errors(project, kind) -> dict[str, str]:
    if kind is None or "dns_expected_answers" not in kind.options:
        return {}
    try:
        rdtype = record_type(urlsplit(project.url))
        normalized_answers(rdtype, project.dns_expected_answers)
    except ValidationError:
        return {}  # the URL's own error says what is wrong
    except ValueError as error:
        return {"dns_expected_answers": f"Expected answers: {error}"}
    return {}


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


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
        "header_assertions": (
            project.header_assertions,
            "there are no response headers to check",
        ),
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
