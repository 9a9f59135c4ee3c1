"""Query parameters read strictly: a value that cannot be used is a 400
naming the parameter, never a 500 or a silently ignored filter."""

from __future__ import annotations

from datetime import UTC, datetime

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

BOOLEANS = {"true": True, "1": True, "false": False, "0": False}
# The database's integer: a longer id overflows it (SQLite raises).
MAX_ID = 2**63 - 1


def text(request: Request, name: str) -> str:
    """The parameter's value, "" when absent."""
    value = request.query_params.get(name, "")
    if "\x00" in value:
        raise ValidationError({name: ["Null characters are not allowed."]})
    return value.strip()


def choice(request: Request, name: str, choices) -> str:
    value = text(request, name)
    if value and value not in choices:
        raise ValidationError(
            {name: [f"Use one of: {', '.join(choices)} (not “{value}”)."]}
        )
    return value


def boolean(request: Request, name: str) -> bool | None:
    value = text(request, name).lower()
    if not value:
        return None
    if value not in BOOLEANS:
        raise ValidationError({name: ["Use true or false."]})
    return BOOLEANS[value]


def identifier(request: Request, name: str) -> int | None:
    """An object's id: ASCII digits up to MAX_ID. `str.isdigit()` is true
    for "²" (which int() refuses) and "٣" (which it reads as 3)."""
    value = text(request, name)
    if not value:
        return None
    if not (value.isascii() and value.isdigit()):
        raise ValidationError({name: ["Enter an id: a whole number."]})
    # The length first: int() of a 5,000-digit string is slow work.
    if len(value) > len(str(MAX_ID)) or int(value) > MAX_ID:
        raise ValidationError({name: [f"Enter an id of at most {MAX_ID}."]})
    return int(value)


def moment(request: Request, name: str) -> datetime | None:
    """An ISO 8601 date and time; without an offset it is read as UTC."""
    value = text(request, name)
    parsed = in_utc(value) if value else None
    if value and parsed is None:
        raise ValidationError(
            {
                name: [
                    "Use an ISO 8601 date and time from year 1 to 9999 in UTC, "
                    "e.g. 2026-11-26T08:00:00Z."
                ]
            }
        )
    return parsed


def in_utc(value: str) -> datetime | None:
    """`value` (ISO 8601) as an aware datetime in UTC; None when it is not
    one, or when it falls outside years 1 to 9999 in UTC (year 1 at
    +14:00 does), which Python's datetime cannot hold."""
    try:
        parsed = parse_datetime(value)
        if parsed is None:
            return None
        return (make_aware(parsed) if is_naive(parsed) else parsed).astimezone(UTC)
    except (ValueError, OverflowError):
        return None
