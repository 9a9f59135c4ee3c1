"""Reading what a user writes for "what counts as up"."""

from __future__ import annotations

import re

import pytest

from projects.checks.expectations import (
    format_status_codes,
    parse_expected_value,
    parse_status_codes,
)


@pytest.mark.parametrize(
    ("text", "ranges"),
    [
        ("200", ((200, 200),)),
        ("200-299", ((200, 299),)),
        ("200 - 299", ((200, 299),)),
        ("200-299, 301, 418", ((200, 299), (301, 301), (418, 418))),
        ("200-299,301,", ((200, 299), (301, 301))),
        (" 204 ", ((204, 204),)),
    ],
)
def test_status_codes_are_a_code_a_range_or_a_list(text, ranges):
    assert parse_status_codes(text) == ranges


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Enter a status code, a range or a list, e.g. 200-299."),
        (" , ", "Enter a status code, a range or a list, e.g. 200-299."),
        ("2xx", "“2xx” is not a status code: use a code like 200, a range"),
        ("200;301", "“200;301” is not a status code"),
        ("200-", "“200-” is not a status code"),
        ("-5", "“-5” is not a status code"),
        ("99", "Status codes run from 100 to 599; 99 is not one."),
        ("200-600", "Status codes run from 100 to 599; 600 is not one."),
        ("299-200", "In 299-200 the first code must not be above the second."),
    ],
)
def test_bad_status_codes_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        parse_status_codes(text)


def test_status_codes_are_spelled_canonically():
    ranges = parse_status_codes("200 - 299,301 ,418-418")

    assert format_status_codes(ranges) == "200-299, 301, 418"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("ok", "ok"),
        ('"ok"', "ok"),
        ("200", 200),
        ("2.5", 2.5),
        ("true", True),
        ("null", None),
        ('"200"', "200"),
        ("[1, 2]", [1, 2]),
        ("all good", "all good"),
    ],
)
def test_the_expected_json_value_is_json_when_it_reads_as_json(text, value):
    assert parse_expected_value(text) == value
