"""The rules that decide whether a response is up, one table each."""

from __future__ import annotations

import json

import pytest

from polling.engine import verdict
from polling.engine.types import JsonAssertion, Keyword
from polling.engine.verdict import (
    body_text,
    describe_statuses,
    json_reason,
    keyword_reason,
    slow_reason,
    status_reason,
)

TWO_XX = ((200, 299),)


@pytest.mark.parametrize(
    ("expected", "code", "reason"),
    [
        (((200, 200),), 200, ""),
        (((200, 200),), 201, "expected 200, got 201"),
        (TWO_XX, 200, ""),
        (TWO_XX, 299, ""),
        (TWO_XX, 503, "expected 200-299, got 503"),
        (TWO_XX, 199, "expected 200-299, got 199"),
        (((200, 299), (301, 301), (418, 418)), 418, ""),
        (
            ((200, 299), (301, 301), (418, 418)),
            302,
            "expected 200-299, 301, 418, got 302",
        ),
    ],
)
def test_the_status_must_be_one_of_the_expected(expected, code, reason):
    assert status_reason(expected, code) == reason


def test_statuses_are_described_as_written():
    assert describe_statuses(((200, 299), (301, 301))) == "200-299, 301"


@pytest.mark.parametrize(
    ("limit", "elapsed", "reason"),
    [
        (None, 99_999, ""),
        (1000, 1000, ""),
        (1000, 999, ""),
        (1000, 2350, "slow: 2,350 ms > 1,000 ms"),
        (50, 51, "slow: 51 ms > 50 ms"),
    ],
)
def test_a_poll_slower_than_the_limit_is_down(limit, elapsed, reason):
    assert slow_reason(limit, elapsed) == reason


@pytest.mark.parametrize(
    ("keyword", "text", "truncated", "reason"),
    [
        (None, "anything", False, ""),
        (Keyword("Welcome"), "<h1>Welcome!</h1>", False, ""),
        (Keyword("Welcome"), "<h1>welcome!</h1>", False, ""),
        (Keyword("Welcome"), "<h1>Error</h1>", False, "keyword 'Welcome' not found"),
        (
            Keyword("Welcome"),
            "<h1>Error</h1>",
            True,
            "keyword 'Welcome' not found in the first 1 MiB",
        ),
        (
            Keyword("Welcome", case_sensitive=True),
            "welcome",
            False,
            "keyword 'Welcome' not found",
        ),
        (Keyword("Welcome", case_sensitive=True), "Welcome", False, ""),
        (Keyword("Error", present=False), "all fine", False, ""),
        (
            Keyword("Error", present=False),
            "Fatal ERROR",
            False,
            "forbidden keyword 'Error' found",
        ),
        (
            Keyword("Error", present=False, case_sensitive=True),
            "Fatal ERROR",
            False,
            "",
        ),
        (Keyword("straße"), "STRASSE", False, ""),
        (Keyword("x" * 100), "", False, f"keyword '{'x' * 59}…' not found"),
    ],
)
def test_the_keyword_must_be_there_or_must_not(keyword, text, truncated, reason):
    assert keyword_reason(keyword, text, truncated=truncated) == reason


def _body(value) -> bytes:
    return json.dumps(value).encode()


OK = JsonAssertion("status", "==", "ok")


@pytest.mark.parametrize(
    ("assertion", "body", "reason"),
    [
        (None, b"not json", ""),
        (OK, _body({"status": "ok"}), ""),
        (
            OK,
            _body({"status": "degraded"}),
            'JSON status: expected "ok", got "degraded"',
        ),
        (OK, b"<html>oops</html>", "body is not JSON"),
        (OK, b"", "body is not JSON"),
        (OK, b"\xff\xfe\x00", "body is not JSON"),
        (OK, _body({"state": "ok"}), "JSON query status found nothing"),
        (OK, _body([1, 2]), "JSON query status found nothing"),
        (
            JsonAssertion("checks.db.ok", "==", True),
            _body({"checks": {"db": {"ok": True}}}),
            "",
        ),
        (
            JsonAssertion("checks.db.ok", "==", True),
            _body({"checks": {"db": {"ok": 1}}}),
            "JSON checks.db.ok: expected true, got 1",
        ),
        (JsonAssertion("code", "==", 200), _body({"code": "200"}), ""),
        (JsonAssertion("code", "==", "200"), _body({"code": 200}), ""),
        (JsonAssertion("code", "==", 200), _body({"code": 200.0}), ""),
        (
            JsonAssertion("flag", "==", None),
            _body({"flag": None}),
            "JSON query flag found nothing",
        ),
        (JsonAssertion("status", "!=", "down"), _body({"status": "ok"}), ""),
        (
            JsonAssertion("status", "!=", "down"),
            _body({"status": "down"}),
            'JSON status: expected anything but "down", got "down"',
        ),
        (JsonAssertion("load", "<", 5), _body({"load": 4.5}), ""),
        (
            JsonAssertion("load", "<", 5),
            _body({"load": 7.25}),
            "JSON load: expected a number < 5, got 7.25",
        ),
        (
            JsonAssertion("load", "<", 5),
            _body({"load": "3"}),
            'JSON load: expected a number < 5, got "3"',
        ),
        (
            JsonAssertion("load", "<", 5),
            _body({"load": True}),
            "JSON load: expected a number < 5, got true",
        ),
        (JsonAssertion("queue", ">", 0), _body({"queue": 3}), ""),
        (
            JsonAssertion("queue", ">", 0),
            _body({"queue": 0}),
            "JSON queue: expected a number > 0, got 0",
        ),
        (
            JsonAssertion("tags", "contains", "prod"),
            _body({"tags": ["eu", "prod"]}),
            "",
        ),
        (
            JsonAssertion("tags", "contains", "prod"),
            _body({"tags": ["dev"]}),
            'JSON tags: expected to contain "prod", got ["dev"]',
        ),
        (
            JsonAssertion("message", "contains", "ready"),
            _body({"message": "all ready"}),
            "",
        ),
        (JsonAssertion("ids", "contains", 7), _body({"ids": [5, 7]}), ""),
        (JsonAssertion("checks", "contains", "db"), _body({"checks": {"db": 1}}), ""),
        (
            JsonAssertion("count", "contains", 1),
            _body({"count": 1}),
            "JSON count: expected to contain 1, got 1",
        ),
        (
            JsonAssertion("items[0].state", "==", "up"),
            _body({"items": [{"state": "up"}]}),
            "",
        ),
        (JsonAssertion("length(items)", ">", 1), _body({"items": [1, 2]}), ""),
        (
            JsonAssertion("length(items)", ">", 1),
            _body({"items": 5}),
            "JSON query length(items) failed: "
            "In function length(), invalid type for value: 5, expected one of: "
            "['string', 'array', 'object'], received: \"number\"",
        ),
        (
            JsonAssertion("status", "~", "ok"),
            _body({"status": "ok"}),
            "unknown JSON comparison ~",
        ),
        (
            JsonAssertion("text", "==", "short"),
            _body({"text": "y" * 100}),
            'JSON text: expected "short", got "' + "y" * 58 + "…",
        ),
    ],
)
def test_the_json_query_must_find_the_expected_value(assertion, body, reason):
    assert json_reason(assertion, body, truncated=False) == reason


def test_a_json_body_cut_at_the_limit_says_so():
    reason = json_reason(OK, b'{"status": "o', truncated=True)

    assert reason == "body is not JSON (cut at 1 MiB)"


@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        ("Grüße".encode(), "text/html; charset=utf-8", "Grüße"),
        ("Grüße".encode("latin-1"), "text/html; charset=ISO-8859-1", "Grüße"),
        ("Grüße".encode("latin-1"), 'text/html; charset="iso-8859-1"', "Grüße"),
        ("Grüße".encode(), None, "Grüße"),
        ("Grüße".encode(), "text/html; charset=no-such-charset", "Grüße"),
        (b"ok \xff", "text/plain", "ok \ufffd"),
    ],
)
def test_the_body_is_read_in_the_charset_the_server_named(body, content_type, text):
    assert body_text(body, content_type) == text


@pytest.mark.parametrize(
    "charset",
    [
        "rot13",
        "rot_13",
        "base64",
        "hex",
        "zlib",
        "bz2",
        "uu",
        "quoted-printable",
        "idna",
        "punycode",
        "unicode_escape",
        "utf-7",
        "x" * 100,
    ],
)
def test_a_charset_that_is_no_plain_text_encoding_reads_as_utf8(charset):
    body = "Grüße 4a6f".encode()

    assert body_text(body, f"text/plain; charset={charset}") == "Grüße 4a6f"


@pytest.mark.parametrize(
    ("charset", "codec"),
    [
        ("UTF-8", "utf_8"),
        ("windows-1252", "cp1252"),
        ("Shift_JIS", "shift_jis"),
        ("us-ascii", "ascii"),
        ("utf-16le", "utf_16_le"),
        ("ISO-2022-JP", "iso2022_jp"),
    ],
)
def test_the_charsets_of_the_web_are_read_by_their_codec(charset, codec):
    assert verdict.charset(f"text/html; charset={charset}") == codec


def test_every_allowed_charset_turns_any_bytes_into_at_most_one_character_each():
    body = bytes(range(256)) * 64

    for codec in verdict.TEXT_ENCODINGS:
        text = body_text(body, f"text/plain; charset={codec}")
        assert 0 < len(text) <= len(body), codec


def test_json_nested_deeper_than_python_reads_is_a_reason_not_an_error():
    reason = json_reason(OK, b"[" * 100_000, truncated=False)

    assert reason == "body is JSON nested too deeply to read"
