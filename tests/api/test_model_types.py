"""A value of the wrong type is a field error at the model, never a crash:
the admin, the API and the YAML import all call full_clean() (issue #28,
item 5)."""

from __future__ import annotations

import pytest

from django.core.exceptions import ValidationError

from projects.models import Project

# A project's team defaults to the install's first, read from the database.
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("expected_status", 99, "Status codes run from 100 to 599; 99 is not one."),
        ("url", 123, "Enter a full URL starting with http:// or https://"),
        ("interval", "abc", "“abc” value must be an integer."),
        ("timeout_seconds", "x", "“x” value must be an integer."),
        ("max_response_time_ms", "x", "“x” value must be an integer."),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error_on_its_field(field, value, message):
    project = Project(name="typed", url="http://127.0.0.1:9/")
    setattr(project, field, value)

    with pytest.raises(ValidationError) as raised:
        project.full_clean(validate_unique=False)

    assert message in " ".join(raised.value.message_dict[field])


def test_a_number_that_spells_valid_codes_is_accepted_as_text():
    project = Project(name="typed", url="http://127.0.0.1:9/", expected_status=204)

    project.full_clean(validate_unique=False)

    assert project.expected_status == "204"


@pytest.mark.parametrize("value", ["a\x00b", "a\x07b", "a\x7fb"])
def test_a_header_value_with_control_characters_is_refused(value):
    # PostgreSQL cannot store \u0000 in jsonb; an HTTP header cannot carry
    # any control character but a tab.
    project = Project(
        name="headers", url="http://127.0.0.1:9/", headers={"X-Test": value}
    )

    with pytest.raises(ValidationError) as raised:
        project.full_clean(validate_unique=False)

    assert raised.value.message_dict["headers"] == [
        "The value of header “X-Test” cannot contain control characters."
    ]
