"""Whether a response counts as up: one small pure function per rule.

Each returns why the response is down, in a few words a person can read,
or "" when its rule holds. They judge what the probe already read (at most
MAX_BODY_BYTES of the body) and never raise.
"""

from __future__ import annotations

import codecs
import json
import operator
from collections.abc import Callable

import jmespath
from jmespath.exceptions import JMESPathError

from polling.engine.types import JsonAssertion, Keyword, StatusRanges

SHOWN_CHARACTERS = 60
_CUT = " in the first 1 MiB"


def describe_statuses(ranges: StatusRanges) -> str:
    """200-299, 301, 418"""
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


def status_reason(expected: StatusRanges, status_code: int) -> str:
    if any(low <= status_code <= high for low, high in expected):
        return ""
    return f"expected {describe_statuses(expected)}, got {status_code}"


def slow_reason(limit_ms: int | None, elapsed_ms: int) -> str:
    if limit_ms is None or elapsed_ms <= limit_ms:
        return ""
    return f"slow: {elapsed_ms:,} ms > {limit_ms:,} ms"


def keyword_reason(keyword: Keyword | None, text: str, *, truncated: bool) -> str:
    if keyword is None:
        return ""
    needle, haystack = keyword.text, text
    if not keyword.case_sensitive:
        needle, haystack = needle.casefold(), haystack.casefold()
    found = needle in haystack
    if keyword.present and not found:
        return f"keyword {_quote(keyword.text)} not found" + (_CUT if truncated else "")
    if found and not keyword.present:
        return f"forbidden keyword {_quote(keyword.text)} found"
    return ""


def json_reason(
    assertion: JsonAssertion | None, body: bytes, *, truncated: bool
) -> str:
    if assertion is None:
        return ""
    try:
        document = json.loads(body)
    except ValueError:  # UnicodeDecodeError is one too
        return "body is not JSON" + (" (cut at 1 MiB)" if truncated else "")
    query = assertion.query
    try:
        found = jmespath.search(query, document)
    except JMESPathError as error:
        return f"JSON query {query} failed: {error}"
    if found is None:
        return f"JSON query {query} found nothing"
    compare, wanted = _COMPARISONS.get(assertion.operator, (None, ""))
    if compare is None:
        return f"unknown JSON comparison {assertion.operator}"
    if compare(found, assertion.expected):
        return ""
    expected = _show(assertion.expected)
    return f"JSON {query}: expected {wanted}{expected}, got {_show(found)}"


def body_text(body: bytes, content_type: str | None) -> str:
    """The body decoded with the charset the server named (UTF-8 when it
    named none, or one Python does not know); bad bytes become U+FFFD."""
    return body.decode(_charset(content_type), errors="replace")


def _charset(content_type: str | None) -> str:
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
            try:
                return codecs.lookup(charset).name
            except LookupError:
                break
    return "utf-8"


# Comparisons ------------------------------------------------------------------


def _equal(found: object, expected: object) -> bool:
    """JSON equality, except that a string equals the JSON spelling of a
    value: "200" equals 200, "true" equals true. True never equals 1."""
    if isinstance(found, str) != isinstance(expected, str):
        text, other = (found, expected) if isinstance(found, str) else (expected, found)
        return text == json.dumps(other)
    if isinstance(found, bool) != isinstance(expected, bool):
        return False
    return found == expected


def _contains(found: object, expected: object) -> bool:
    if isinstance(found, str):
        needle = expected if isinstance(expected, str) else json.dumps(expected)
        return needle in found
    if isinstance(found, list):
        return any(_equal(item, expected) for item in found)
    if isinstance(found, dict):
        return isinstance(expected, str) and expected in found
    return False


def _ordered(compare: Callable[[float, float], bool]) -> Callable:
    def check(found: object, expected: object) -> bool:
        return _is_number(found) and _is_number(expected) and compare(found, expected)

    return check


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# operator: (holds, how the reason names what was expected)
_COMPARISONS: dict[str, tuple[Callable[[object, object], bool], str]] = {
    "==": (_equal, ""),
    "!=": (lambda found, expected: not _equal(found, expected), "anything but "),
    "<": (_ordered(operator.lt), "a number < "),
    ">": (_ordered(operator.gt), "a number > "),
    "contains": (_contains, "to contain "),
}


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > SHOWN_CHARACTERS:
        return text[: SHOWN_CHARACTERS - 1] + "…"
    return text


def _quote(text: str) -> str:
    if len(text) > SHOWN_CHARACTERS:
        text = text[: SHOWN_CHARACTERS - 1] + "…"
    return f"'{text}'"
