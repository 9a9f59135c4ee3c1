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
    if not parts.hostname:
        raise ValidationError("The URL has no host name.")
    _validate_host(parts.hostname)
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
