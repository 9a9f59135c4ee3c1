"""Validators for what a user types into a Project.

Each one raises ValidationError with a message that says what is wrong, so
the admin (or any other form) can show it next to the field.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import jmespath
from jmespath.exceptions import IncompleteExpressionError, JMESPathError

from django.core.exceptions import ValidationError

from projects.checks.expectations import parse_status_codes
from projects.checks.kinds import BY_SCHEME, scheme_list

# RFC 9110 token characters, the only ones allowed in a header name.
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# Letters, digits, hyphens and dots (IDNA hosts are checked separately).
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9\-.]*[A-Za-z0-9])?$")


def validate_http_url(value: str) -> None:
    """Accept an absolute URL of a scheme some kind of check serves, with a
    host that can be reached, and what that kind asks of it (kinds/).
    (Named for its first job: migrations name it.)"""
    if any(char.isspace() for char in value):
        raise ValidationError("A URL cannot contain spaces or line breaks.")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValidationError("A URL cannot contain control characters.")
    parts = urlsplit(value)
    if not parts.scheme:
        raise ValidationError(
            "Enter a full URL starting with http:// or https://, "
            "for example https://example.com/health."
        )
    kind = BY_SCHEME.get(parts.scheme.lower())
    if kind is None:
        raise ValidationError(
            "Only %(schemes)s URLs can be polled, not %(scheme)s:.",
            params={"schemes": scheme_list(), "scheme": parts.scheme},
        )
    if parts.hostname:
        _validate_host(parts.hostname)
    elif not kind.host_optional:
        raise ValidationError("The URL has no host name.")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port lazily
    except ValueError:
        raise ValidationError(
            "The URL's port must be a number from 1 to 65535."
        ) from None
    kind.check_url(parts)


def _validate_host(host: str) -> None:
    if ":" in host:  # an IPv6 literal; urlsplit already removed the brackets
        return
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = ""
    if not HOSTNAME_RE.match(ascii_host) or ".." in ascii_host:
        raise ValidationError(
            "“%(host)s” is not a valid host name.", params={"host": host}
        )


def validate_headers(value: object) -> None:
    """Accept a JSON object of header name -> string value."""
    if not isinstance(value, dict):
        raise ValidationError(
            'Headers must be a JSON object, like {"Accept": "application/json"}.'
        )
    for name, header_value in value.items():
        if not HEADER_NAME_RE.match(name):
            raise ValidationError(
                "“%(name)s” is not a valid header name: use letters, digits "
                "and - _ . ! # $ %% & ' * + ^ ` | ~ only.",
                params={"name": name},
            )
        if not isinstance(header_value, str):
            raise ValidationError(
                "The value of header “%(name)s” must be a string in quotes.",
                params={"name": name},
            )
        if "\r" in header_value or "\n" in header_value:
            raise ValidationError(
                "The value of header “%(name)s” cannot contain line breaks.",
                params={"name": name},
            )
        if any(_is_control(char) for char in header_value):
            raise ValidationError(
                "The value of header “%(name)s” cannot contain control characters.",
                params={"name": name},
            )


HEADER_OPERATORS = ("exists", "absent", "==", "contains", "regex")
HEADER_ASSERTION_EXAMPLE = (
    '[{"name": "Cache-Control", "operator": "contains", "value": "no-store"}]'
)


def validate_header_assertions(value: object) -> None:
    """Accept a JSON list of {"name", "operator", "value"}: a header name,
    one of HEADER_OPERATORS, and the value it compares with (none for
    exists and absent; a regular expression that compiles for regex)."""
    if not isinstance(value, list):
        raise ValidationError(
            "Header assertions must be a JSON list, like %(example)s.",
            params={"example": HEADER_ASSERTION_EXAMPLE},
        )
    for index, item in enumerate(value, start=1):
        _validate_header_assertion(index, item)


def _validate_header_assertion(index: int, item: object) -> None:
    if not isinstance(item, dict) or set(item) - {"name", "operator", "value"}:
        raise ValidationError(
            "Header assertion %(index)s must be an object with name, operator "
            "and value, like %(example)s.",
            params={"index": index, "example": HEADER_ASSERTION_EXAMPLE},
        )
    name, operator = item.get("name"), item.get("operator")
    value = item.get("value", "")
    if not isinstance(name, str) or not HEADER_NAME_RE.match(name):
        raise ValidationError(
            "Header assertion %(index)s: “%(name)s” is not a header name.",
            params={"index": index, "name": name},
        )
    if operator not in HEADER_OPERATORS:
        raise ValidationError(
            "Header assertion %(index)s: the operator must be one of %(ops)s.",
            params={"index": index, "ops": ", ".join(HEADER_OPERATORS)},
        )
    if not isinstance(value, str):
        raise ValidationError(
            "Header assertion %(index)s: the value must be a string in quotes.",
            params={"index": index},
        )
    if operator in ("exists", "absent"):
        if value:
            raise ValidationError(
                "Header assertion %(index)s: %(operator)s takes no value.",
                params={"index": index, "operator": operator},
            )
    elif not value:
        raise ValidationError(
            "Header assertion %(index)s: enter the value to compare with.",
            params={"index": index},
        )
    elif operator == "regex":
        validate_regex(value)


def validate_regex(value: str) -> None:
    """Accept a Python regular expression that compiles."""
    try:
        re.compile(value)
    except re.error as error:
        raise ValidationError(
            "“%(pattern)s” is not a regular expression (%(detail)s).",
            params={"pattern": value, "detail": error.msg},
        ) from None


def _is_control(char: str) -> bool:
    """Not allowed in a header value (RFC 9110 allows a tab); PostgreSQL
    cannot even store NUL in a JSON column."""
    return (ord(char) < 32 and char != "\t") or ord(char) == 127


def validate_status_codes(value: str) -> None:
    """Accept one code, a range or a list: 200, 200-299, 200-299, 301."""
    try:
        parse_status_codes(value)
    except ValueError as error:
        raise ValidationError(str(error)) from None


def validate_json_query(value: str) -> None:
    """Accept a JMESPath expression that compiles."""
    try:
        jmespath.compile(value)
    except JMESPathError as error:
        raise ValidationError(
            "“%(query)s” is not a JMESPath query (%(detail)s). Examples: "
            "status, checks.database.ok, items[0].state.",
            params={"query": value, "detail": _parse_problem(error)},
        ) from None


def _parse_problem(error: JMESPathError) -> str:
    if isinstance(error, IncompleteExpressionError):
        return "it ends too soon"
    position = getattr(error, "lex_position", None)
    if position is None:
        return "it cannot be read"
    return f"unexpected “{error.token_value}” at character {position + 1}"
