"""Flow: an ordered list of HTTP steps run in one poll, each judged by its
own rules, values captured from one step used by the next
(polling/engine/probes/flow.py).

A step, as the admin, the API and the YAML file all spell it:

    name: my orders
    method: GET
    url: https://shop.example.com/api/orders
    headers: {Authorization: "Bearer {{token}}"}
    body: ""
    expect: {status: "200-299", keyword: orders, max_response_time_ms: 800,
             json: [{query: count, operator: ">", expected: 0}],
             headers: {Content-Type: json}}
    capture: {order: "json:orders[0].id"}

`{{name}}` is a value an earlier step captured, `{{secrets.NAME}}` a team
secret (projects/models/flows.py); both are replaced in the URL (URL-
encoded), the headers and the body. `clean_steps` is the one validation:
its messages name the step and the field ("step 2 'my orders': url: ...").
A flow has no URL of its own, so no scheme chooses it: Project.kind does.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult

import jmespath
from jmespath.exceptions import JMESPathError

from django.core.exceptions import ValidationError

from projects.checks.expectations import parse_status_codes
from projects.checks.kinds import BY_SCHEME, http
from projects.checks.kinds.kind import CheckKind
from projects.checks.validators import validate_http_url

MAX_STEPS = 20
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
STEP_KEYS = ("name", "method", "url", "headers", "body", "expect", "capture")
EXPECT_KEYS = (
    "status",
    "keyword",
    "keyword_mode",
    "keyword_case_sensitive",
    "json",
    "headers",
    "max_response_time_ms",
)
JSON_OPERATORS = ("==", "!=", "<", ">", "contains")
KEYWORD_MODES = ("contains", "not_contains")
CAPTURE_SOURCES = ("json:", "header:", "regex:")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# {{token}} or {{secrets.shop_password}}, spaces inside the braces allowed.
PLACEHOLDER_RE = re.compile(r"\{\{\s*(secrets\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# The reason of a failed flow poll starts with the step: the incident's
# title takes it from there (failing_step).
STEP_REASON_RE = re.compile(r"^(step \d+ '[^']*')")
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def label(number: int, name: str) -> str:
    """How messages and reasons name a step: "step 2 'my orders'"."""
    return f"step {number} '{name}'"


def failing_step(reason: str) -> str:
    """The step a flow poll's reason names ("step 2 'my orders'"), or ""."""
    match = STEP_REASON_RE.match(reason or "")
    return match.group(1) if match else ""


def placeholders(text: str) -> list[tuple[bool, str]]:
    """The (is_secret, name) of each placeholder in `text`, in order."""
    return [(bool(m.group(1)), m.group(2)) for m in PLACEHOLDER_RE.finditer(text)]


def step_texts(step: dict) -> list[str]:
    """Where placeholders may be: the URL, the header values, the body."""
    return [step.get("url", ""), *step.get("headers", {}).values(), step["body"]]


def secret_names(steps: list[dict]) -> set[str]:
    """The team secrets the steps read."""
    return {
        name
        for step in steps
        for text in step_texts(step)
        for is_secret, name in placeholders(text)
        if is_secret
    }


def masked_steps(steps: list[dict], mask: str) -> list[dict]:
    """The steps as a read key or an export sees them: a header value
    that is literal text is masked (it may be a token); one built on a
    placeholder is kept, since its secret part is only a reference."""
    return [
        {
            **step,
            "headers": {
                name: value if PLACEHOLDER_RE.search(value) else mask
                for name, value in step.get("headers", {}).items()
            },
        }
        for step in steps
    ]


def unmasked_steps(steps: object, stored: list[dict], mask: str) -> object:
    """Steps read back from an export: a masked header value stands for
    the stored step's (the step of that name) value; left masked when
    there is none."""
    if not isinstance(steps, list):
        return steps
    stored_headers = {step["name"]: step["headers"] for step in stored}
    unmasked = []
    for step in steps:
        if isinstance(step, dict) and isinstance(step.get("headers"), dict):
            kept = stored_headers.get(step.get("name"), {})
            headers = {
                name: kept.get(name, value) if value == mask else value
                for name, value in step["headers"].items()
            }
            step = {**step, "headers": headers}
        unmasked.append(step)
    return unmasked


def clean_steps(raw: object) -> list[dict]:
    """The steps in their normal form (every key present), or a
    ValidationError listing each problem, step by step."""
    if raw in (None, ""):
        return []
    if not isinstance(raw, list):
        raise ValidationError("Steps must be a list of steps.")
    if len(raw) > MAX_STEPS:
        raise ValidationError(f"A flow has at most {MAX_STEPS} steps.")
    steps, messages = [], []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            messages.append(f"step {number}: Expected a mapping of a step's keys.")
            continue
        name = item.get("name") if isinstance(item.get("name"), str) else ""
        step, errors = normal_step(item)
        messages += [f"{label(number, name)}: {f}: {m}" for f, m in errors.items()]
        steps.append(step)
    if not messages:
        messages = order_errors(steps)
    if messages:
        raise ValidationError(messages)
    return steps


def normal_step(item: dict) -> tuple[dict, dict[str, str]]:
    """One step with every key present, and {key: message} of its problems."""
    errors = {
        str(key): f"Unknown key; a step has {', '.join(STEP_KEYS)}."
        for key in item
        if key not in STEP_KEYS
    }
    step = {
        "name": item.get("name", ""),
        "method": item.get("method", "GET"),
        "url": item.get("url", ""),
        "headers": item.get("headers") or {},
        "body": item.get("body") or "",
        "expect": item.get("expect") or {},
        "capture": item.get("capture") or {},
    }
    for key, check in CHECKS:
        if key not in errors and (message := check(step[key])):
            errors[key] = message
    if "expect" not in errors:
        step["expect"] = _normal_expect(step["expect"])
    return step, errors


def order_errors(steps: list[dict]) -> list[str]:
    """Names repeated, and {{name}} used before a step captures it."""
    messages, seen, captured = [], set(), set()
    for number, step in enumerate(steps, start=1):
        where = label(number, step["name"])
        if step["name"] in seen:
            messages.append(f"{where}: name: Another step has this name.")
        seen.add(step["name"])
        for text in step_texts(step):
            for is_secret, name in placeholders(text):
                if not is_secret and name not in captured:
                    messages.append(
                        f"{where}: {{{{{name}}}}} is not captured by an "
                        "earlier step (capture: {" + name + ': "json:..."}).'
                    )
        captured |= set(step["capture"])
    return messages


def _check_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        return "Every step needs a name."
    if len(value) > 200 or "'" in value:
        return "At most 200 characters, without '."
    return ""


def _check_method(value: object) -> str:
    return "" if value in METHODS else f"One of {', '.join(METHODS)}."


def _check_url(value: object) -> str:
    if not isinstance(value, str) or not value:
        return "Enter the URL of the step's request."
    scheme, sep, _ = value.partition("://")
    if sep and scheme.lower() in BY_SCHEME and scheme.lower() not in http.KIND.schemes:
        return "A step sends an HTTP request: its URL starts with http:// or https://."
    try:
        validate_http_url(PLACEHOLDER_RE.sub("x", value))
    except ValidationError as error:
        return " ".join(error.messages)
    return ""


def _check_headers(value: object) -> str:
    if not isinstance(value, dict):
        return 'Expected a mapping of header names to values, like {"Accept": "*/*"}.'
    for name, text in value.items():
        if not isinstance(name, str) or not HEADER_NAME_RE.match(name):
            return f"“{name}” is not a valid header name."
        if not isinstance(text, str) or any(c in text for c in "\r\n\0"):
            return f"The value of {name} must be text on one line."
    return ""


def _check_body(value: object) -> str:
    return "" if isinstance(value, str) else "Expected text."


def _check_expect(value: object) -> str:
    if not isinstance(value, dict):
        return "Expected a mapping of rules, like {status: '200'}."
    unknown = [str(key) for key in value if key not in EXPECT_KEYS]
    if unknown:
        return f"Unknown rule {unknown[0]}; the rules are {', '.join(EXPECT_KEYS)}."
    checks = (
        ("status", _check_status),
        ("keyword", _check_body),
        ("keyword_mode", _check_keyword_mode),
        ("keyword_case_sensitive", _check_bool),
        ("json", _check_json),
        ("headers", _check_expected_headers),
        ("max_response_time_ms", _check_slow),
    )
    for key, check in checks:
        if key in value and (message := check(value[key])):
            return f"{key}: {message}"
    return ""


def _check_keyword_mode(value: object) -> str:
    return "" if value in KEYWORD_MODES else "contains or not_contains."


def _check_bool(value: object) -> str:
    return "" if isinstance(value, bool) else "Expected true or false."


def _check_status(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return "Expected codes in quotes, like '200' or '200-299'."
    try:
        parse_status_codes(value)
    except ValueError as error:
        return str(error)
    return ""


def _check_json(value: object) -> str:
    if not isinstance(value, list):
        return "Expected a list of {query, operator, expected}."
    for rule in value:
        if not isinstance(rule, dict) or set(rule) - {"query", "operator", "expected"}:
            return "Each rule is {query, operator, expected}."
        try:
            jmespath.compile(str(rule.get("query") or ""))
        except JMESPathError:
            return f"“{rule.get('query')}” is not a JMESPath query."
        if rule.get("operator", "==") not in JSON_OPERATORS:
            return f"The operator is one of {', '.join(JSON_OPERATORS)}."
        if rule.get("operator") in ("<", ">") and not _is_number(rule.get("expected")):
            return f"{rule['operator']} compares numbers."
    return ""


def _check_expected_headers(value: object) -> str:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return "Expected a mapping of header names to the text each must contain."
    return ""


def _check_slow(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return "Expected a whole number of milliseconds, at least 1."
    return ""


def _check_capture(value: object) -> str:
    if not isinstance(value, dict):
        return 'Expected a mapping of names to sources, like {token: "json:token"}.'
    for name, source in value.items():
        if not (isinstance(name, str) and NAME_RE.fullmatch(name)) or name == "secrets":
            return f"“{name}” cannot be a name: letters, digits and _."
        if message := _check_source(source):
            return f"{name}: {message}"
    return ""


def _check_source(source: object) -> str:
    if source == "status":
        return ""
    if not isinstance(source, str) or not source.startswith(CAPTURE_SOURCES):
        return "Capture from json:<JMESPath>, header:<Name>, regex:<pattern> or status."
    kind, _, rest = source.partition(":")
    if not rest:
        return f"Say what to capture after {kind}:."
    if kind == "json":
        try:
            jmespath.compile(rest)
        except JMESPathError:
            return f"“{rest}” is not a JMESPath query."
    if kind == "regex":
        try:
            compiled = re.compile(rest)
        except re.error as error:
            return f"Not a regular expression: {error}."
        if compiled.groups < 1:
            return "The pattern needs a group, (...): its first group is captured."
    return ""


CHECKS = (
    ("name", _check_name),
    ("method", _check_method),
    ("url", _check_url),
    ("headers", _check_headers),
    ("body", _check_body),
    ("expect", _check_expect),
    ("capture", _check_capture),
)


def _normal_expect(expect: dict) -> dict:
    normal = dict(expect)
    if isinstance(normal.get("status"), int):
        normal["status"] = str(normal["status"])
    return normal


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_url(parts: SplitResult) -> None:
    """A flow has no URL of its own: each step has one."""


def up_rules(project) -> list[str]:
    steps = project.step_dicts()
    names = ", then ".join(f"“{step['name']}”" for step in steps)
    return [f"{len(steps)} steps pass in order: {names}" if steps else "no steps yet"]


KIND = CheckKind(
    name="flow",
    label="Flow (several steps)",
    schemes=(),
    example="",
    sends_http=True,
    check_url=check_url,
    up_rules=up_rules,
    measures="total time of its steps",
)
