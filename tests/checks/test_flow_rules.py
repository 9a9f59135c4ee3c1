"""A flow's steps: the one set of rules the admin, the API and the YAML
import apply (projects/checks/kinds/flow.py)."""

from __future__ import annotations

import pytest

from django.core.exceptions import ValidationError

from projects.checks.kinds.flow import clean_steps, failing_step, secret_names
from tests.support.flows import contract_steps


def messages_of(raw) -> list[str]:
    with pytest.raises(ValidationError) as refused:
        clean_steps(raw)
    return refused.value.messages


def test_the_contract_steps_are_valid_and_come_back_in_normal_form():
    steps = contract_steps()
    short = [{k: v for k, v in step.items() if v not in ("", {}, [])} for step in steps]
    assert clean_steps(short) == steps


def test_a_missing_method_is_get_and_a_numeric_status_is_text():
    [step] = clean_steps(
        [{"name": "a", "url": "https://example.com/", "expect": {"status": 201}}]
    )
    assert step["method"] == "GET"
    assert step["expect"] == {"status": "201"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"url": "ftp://example.com/"}, "step 2 'my orders': url: Only"),
        ({"url": "tcp://db.example.com:5432"}, "step 2 'my orders': url: A step"),
        ({"method": "FETCH"}, "step 2 'my orders': method: One of GET"),
        ({"expect": {"status": "abc"}}, "step 2 'my orders': expect: status:"),
        ({"expect": {"colour": "red"}}, "step 2 'my orders': expect: Unknown rule"),
        ({"capture": {"x": "xpath://a"}}, "step 2 'my orders': capture: x: Capture"),
        ({"capture": {"x": "regex:abc"}}, "step 2 'my orders': capture: x: The"),
        ({"capture": {"x": "json:[["}}, "step 2 'my orders': capture: x: “[["),
        ({"headers": {"Bad Name": "x"}}, "step 2 'my orders': headers: “Bad Name”"),
        ({"retries": 3}, "step 2 'my orders': retries: Unknown key"),
    ],
)
def test_each_problem_names_the_step_and_the_field(change, message):
    steps = contract_steps()
    steps[1] = {**steps[1], **change}
    [found] = messages_of(steps)
    assert found.startswith(message)


def test_a_value_used_before_a_step_captures_it_is_refused():
    steps = contract_steps()
    steps.reverse()
    assert any("{{token}} is not captured" in m for m in messages_of(steps))


def test_repeated_names_and_a_flow_that_is_not_a_list_are_refused():
    steps = contract_steps()
    steps[1]["name"] = "log in"
    assert "step 2 'log in': name: Another step has this name." in messages_of(steps)
    assert messages_of({"name": "x"}) == ["Steps must be a list of steps."]


def test_the_secrets_a_flow_reads_and_the_step_a_reason_names():
    assert secret_names(contract_steps()) == {"shop_password"}
    assert failing_step("step 2 'my orders': expected 200-299, got 401") == (
        "step 2 'my orders'"
    )
    assert failing_step("timed out after 10 s") == ""
