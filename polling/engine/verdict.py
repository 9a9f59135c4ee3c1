"""Whether a response counts as up: one small pure function per rule.

Each returns why the response is down, in a few words a person can read,
or "" when its rule holds. They judge what the probe already read (at most
MAX_BODY_BYTES of the body) and never raise.

The body is the target's to choose, so the work on it is bounded: it is
decoded only with TEXT_ENCODINGS, each linear and in C (1 MiB of random
bytes in 1 to 40 ms here; punycode took 14 s, quadratic, and rot13 or
base64 raise), into at most one character per byte; JSON is parsed in C
and a document nested too deeply to judge is a failed check, not a crash.
"""

from __future__ import annotations

import encodings
import encodings.aliases
import functools
import json
import operator
import re
from collections.abc import Callable

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult

from polling.engine.types import (
    HeaderAssertion,
    JsonAssertion,
    Keyword,
    StatusRanges,
)

SHOWN_CHARACTERS = 60
# What a regular expression is matched against at most: a server's header
# or reply, so its cost has a bound the server cannot move.
MAX_MATCHED_CHARACTERS = 4096
_CUT = " in the first 1 MiB"
# The charsets a body is decoded with: the text encodings of the web (the
# WHATWG Encoding Standard's, by Python's module names) and a few more.
# Any other name, a codec that is no text encoding (rot13, base64, hex,
# zlib, quoted-printable), or one whose cost grows faster than the body
# (punycode, idna), falls back to UTF-8.
TEXT_ENCODINGS = frozenset(
    """
    ascii latin_1 utf_8 utf_8_sig utf_16 utf_16_le utf_16_be utf_32 utf_32_le
    utf_32_be iso8859_2 iso8859_3 iso8859_4 iso8859_5 iso8859_6 iso8859_7
    iso8859_8 iso8859_9 iso8859_10 iso8859_11 iso8859_13 iso8859_14 iso8859_15
    iso8859_16 koi8_r koi8_u mac_roman mac_cyrillic cp437 cp850 cp866 cp874
    cp1250 cp1251 cp1252 cp1253 cp1254 cp1255 cp1256 cp1257 cp1258 gb2312 gbk
    gb18030 big5 big5hkscs euc_jp euc_kr iso2022_jp shift_jis cp932 cp949 cp950
    """.split()  # noqa: SIM905  (a list of 53 names, one a line, reads worse)
)
# Longer charset names are not looked at: none of the above needs more.
_MAX_CHARSET_LENGTH = 40


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


def header_reason(
    assertions: tuple[HeaderAssertion, ...], headers: tuple[tuple[str, str], ...]
) -> str:
    """The first header assertion that fails, in words; names compare
    without case, and a header sent twice is read as its values joined
    with ", " (RFC 9110 5.3)."""
    for assertion in assertions:
        values = [v for n, v in headers if n.lower() == assertion.name.lower()]
        if reason := _header_reason(assertion, values):
            return reason
    return ""


def _header_reason(assertion: HeaderAssertion, values: list[str]) -> str:
    name, wanted, op = assertion.name, assertion.value, assertion.operator
    if op == "absent":
        return f"header {name} found, must be absent" if values else ""
    if not values:
        return f"header {name} missing"
    value = ", ".join(values)
    if op == "==" and value != wanted:
        return f"header {name}: expected {_quote(wanted)}, got {_quote(value)}"
    if op == "contains" and wanted not in value:
        return f"header {name} {_quote(wanted)} not found"
    if op == "regex" and not _search(wanted, value):
        return f"header {name} {_quote(value)} does not match {_quote(wanted)}"
    return ""


def reply_reason(what: str, reply: str, expected: str, *, regex: bool) -> str:
    """Whether a reply (a UDP answer, an SSH banner) holds the expected
    text, or matches it as a regular expression; "" when nothing is
    expected."""
    if not expected:
        return ""
    if regex:
        if _search(expected, reply):
            return ""
        return f"{what} {_quote(reply)} does not match {_quote(expected)}"
    if expected in reply:
        return ""
    return f"{what} {_quote(reply)} does not contain {_quote(expected)}"


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text[:MAX_MATCHED_CHARACTERS]) is not None
    except re.error:
        return False


def json_reason(
    assertion: JsonAssertion | None, body: bytes, *, truncated: bool
) -> str:
    if assertion is None:
        return ""
    return document_reason(assertion, parse_json(body), truncated=truncated)


# What parse_json returns for a body that is not JSON, and for JSON nested
# too deeply to read.
NOT_JSON = object()
TOO_DEEP = object()


def parse_json(body: bytes) -> object:
    """The body's JSON document, NOT_JSON or TOO_DEEP; parsed once for
    all the assertions and captures of a response."""
    try:
        return json.loads(body)
    except ValueError:  # UnicodeDecodeError is one too
        return NOT_JSON
    except RecursionError:
        return TOO_DEEP


def document_reason(
    assertion: JsonAssertion, document: object, *, truncated: bool
) -> str:
    """json_reason of a body parse_json has read."""
    if document is NOT_JSON:
        return "body is not JSON" + (" (cut at 1 MiB)" if truncated else "")
    if document is TOO_DEEP:
        return "body is JSON nested too deeply to read"
    try:
        return _query_reason(assertion, document)
    except RecursionError:  # the query or the comparison went too deep
        return f"JSON query {assertion.query} failed: the body is nested too deeply"


@functools.lru_cache(maxsize=4096)
def compiled(query: str) -> ParsedResult:
    """The JMESPath query parsed, once per query rather than per poll
    (jmespath's own cache keeps 128 and is emptied by half when full, so
    thousands of flows and projects would parse theirs again and again);
    raises JMESPathError."""
    return jmespath.compile(query)


def _query_reason(assertion: JsonAssertion, document: object) -> str:
    query = assertion.query
    try:
        found = compiled(query).search(document)
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
    """The body decoded with the charset the server named when it is one
    of TEXT_ENCODINGS, else as UTF-8; bad bytes become U+FFFD."""
    try:
        return body.decode(charset(content_type), errors="replace")
    except (LookupError, UnicodeError):  # not expected of TEXT_ENCODINGS
        return body.decode("utf-8", errors="replace")


def charset(content_type: str | None) -> str:
    """The codec for the Content-Type's charset: one of TEXT_ENCODINGS, or
    utf_8 when it names none, or another."""
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return _text_encoding(value.strip().strip("\"'"))
    return "utf_8"


def _text_encoding(name: str) -> str:
    if len(name) > _MAX_CHARSET_LENGTH:
        return "utf_8"
    # Python's own normalisation and aliases, without importing a codec
    # module by a name the server chose.
    normal = encodings.normalize_encoding(name).lower()
    module = encodings.aliases.aliases.get(normal, normal)
    return module if module in TEXT_ENCODINGS else "utf_8"


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
