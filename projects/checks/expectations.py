"""What a user writes for "what counts as up", read into plain values.

Pure functions, no Django: the validators turn their ValueErrors into field
errors, and the poller's store uses them to build its targets, so what the
admin accepted is exactly what the poller checks.
"""

from __future__ import annotations

import functools
import json
import re

MIN_STATUS = 100
MAX_STATUS = 599
_ITEM = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")

StatusRanges = tuple[tuple[int, int], ...]


# Cached: the poller reads every project's codes on each reload, and most
# projects spell the same few.
@functools.lru_cache(maxsize=1024)
def parse_status_codes(text: str) -> StatusRanges:
    """Read "200", "200-299" or "200-299, 301, 418" into (low, high)
    pairs, in the order written. Raises ValueError saying what is wrong."""
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ValueError("Enter a status code, a range or a list, e.g. 200-299.")
    return tuple(_parse_item(item) for item in items if item)


def format_status_codes(ranges: StatusRanges) -> str:
    """The canonical spelling: "200-299, 301"."""
    return ", ".join(
        str(low) if low == high else f"{low}-{high}" for low, high in ranges
    )


def _parse_item(item: str) -> tuple[int, int]:
    match = _ITEM.fullmatch(item)
    if not match:
        raise ValueError(
            f"“{item}” is not a status code: use a code like 200, a range "
            "like 200-299, or a list like 200-299, 301."
        )
    low = int(match[1])
    high = int(match[2] or low)
    for code in (low, high):
        if not MIN_STATUS <= code <= MAX_STATUS:
            raise ValueError(
                f"Status codes run from {MIN_STATUS} to {MAX_STATUS}; "
                f"{code} is not one."
            )
    if low > high:
        raise ValueError(f"In {item} the first code must not be above the second.")
    return low, high


def parse_expected_value(text: str) -> object:
    """The value a JSON assertion compares with: JSON when the text is JSON
    (5, true, null, "ok"), else the text itself (ok)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def normalized_status_codes(text: str) -> str:
    """The expected status codes spelled canonically; unchanged when they
    cannot be read (the field's validator says why)."""
    try:
        return format_status_codes(parse_status_codes(text))
    except ValueError:
        return text
