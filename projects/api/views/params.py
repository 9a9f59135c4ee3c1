"""Query parameters read strictly: a value that cannot be used is a 400
naming the parameter, never a 500 or a silently ignored filter."""

from __future__ import annotations

from datetime import datetime

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


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


def moment(request: Request, name: str) -> datetime | None:
    """An ISO 8601 date and time; without an offset it is read as UTC."""
    value = text(request, name)
    if not value:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise ValidationError(
            {name: ["Use an ISO 8601 date and time, e.g. 2026-11-26T08:00:00Z."]}
        )
    return make_aware(parsed) if is_naive(parsed) else parsed
