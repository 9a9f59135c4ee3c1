"""Each kind's own options: refused, as a field error naming why, on a
project of another kind; each kind's settings checked where they are
typed (the admin's form, which the API and the YAML import share)."""

from __future__ import annotations

import json

import pytest

from projects.forms.project import ProjectForm

VALID = {
    "name": "check",
    "url": "https://example.com/health",
    "method": "GET",
    "headers": "{}",
    "body": "",
    "expected_status": "200",
    "interval": 5,
    "interval_unit": "minutes",
    "timeout_seconds": 10,
    "enabled": True,
}


def errors(**changes) -> dict[str, list[str]]:
    form = ProjectForm(data={**VALID, **changes})
    form.is_valid()
    return form.errors


def assertions(*items: dict) -> str:
    return json.dumps(list(items))


@pytest.mark.django_db
def test_header_assertions_on_an_http_project_save():
    form = ProjectForm(
        data={
            **VALID,
            "header_assertions": assertions(
                {"name": "Cache-Control", "operator": "contains", "value": "no"},
                {"name": "Server", "operator": "absent"},
            ),
        }
    )
    assert form.is_valid(), form.errors
    project = form.save()
    assert project.header_assertions[1] == {"name": "Server", "operator": "absent"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('{"a": 1}', "Header assertions must be a JSON list"),
        ("[1]", "Header assertion 1 must be an object with name, operator and value"),
        (
            assertions({"name": "Bad Name", "operator": "exists"}),
            "Header assertion 1: “Bad Name” is not a header name.",
        ),
        (
            assertions({"name": "X-A", "operator": "matches", "value": "x"}),
            "Header assertion 1: the operator must be one of exists, absent, ==, "
            "contains, regex.",
        ),
        (
            assertions({"name": "X-A", "operator": "=="}),
            "Header assertion 1: enter the value to compare with.",
        ),
        (
            assertions({"name": "X-A", "operator": "exists", "value": "x"}),
            "Header assertion 1: exists takes no value.",
        ),
        (
            assertions({"name": "X-A", "operator": "regex", "value": "("}),
            "“(” is not a regular expression (missing ), unterminated subpattern).",
        ),
        ("not json", "Header assertions must be valid JSON"),
    ],
)
def test_a_bad_header_assertion_is_a_field_error(value, message):
    [error] = errors(header_assertions=value)["header_assertions"]
    assert error.startswith(message)


@pytest.mark.django_db
def test_header_assertions_on_a_tcp_check_are_refused():
    found = errors(
        url="tcp://db.example.com:5432",
        header_assertions=assertions({"name": "X-A", "operator": "exists"}),
    )
    assert found["header_assertions"] == [
        "A TCP check only opens a connection: there are no response headers to check."
    ]
