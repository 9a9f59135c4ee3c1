"""Integer query values, read strictly: a bad one is a 400, never a 500.

`str.isdigit()` is true for "²" and "٣", which int() rejects or reads as
another number, and a 20-digit id overflows the database's integer. Only
ASCII digits within a signed 64-bit integer are accepted.
"""

from __future__ import annotations

from django.core.exceptions import BadRequest
from django.http import QueryDict

MAX_ID = 2**63 - 1
_MAX_DIGITS = len(str(MAX_ID))


def positive_int(query: QueryDict, name: str) -> int | None:
    """The value of `name` as an integer from 1 to MAX_ID; None when it is
    missing or empty. Raises BadRequest (a 400) for anything else."""
    value = query.get(name, "").strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= _MAX_DIGITS):
        raise BadRequest(f"{name} must be a whole number")
    number = int(value)
    if not 1 <= number <= MAX_ID:
        raise BadRequest(f"{name} is out of range")
    return number
