"""Response-header assertions on HTTP(S) projects, against a real server:
each operator, the first failure as the reason, names without case."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest

from polling.engine.types import HeaderAssertion, Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


def poll(handle, server, headers: list[str], *assertions, **query) -> Outcome:
    url = server.url(
        "/text?" + urlencode({"body": "ok", "header": headers, **query}, doseq=True)
    )
    target = Target(project_id=7, url=url, header_assertions=tuple(assertions))
    return run_poll(handle, Task(target, datetime.now(UTC)))


def test_a_header_with_the_expected_text_is_up(handle, target_server):
    outcome = poll(
        handle,
        target_server,
        ["Cache-Control:no-store, private"],
        HeaderAssertion("cache-control", "contains", "no-store"),
        HeaderAssertion("Cache-Control", "regex", r"^no-store\b"),
        HeaderAssertion("X-Powered-By", "absent"),
        HeaderAssertion("Content-Type", "exists"),
    )
    assert (outcome.up, outcome.error) == (True, "")


def test_a_header_without_the_text_is_down_naming_it(handle, target_server):
    outcome = poll(
        handle,
        target_server,
        ["Cache-Control:public"],
        HeaderAssertion("Cache-Control", "contains", "no-store"),
    )
    assert not outcome.up
    assert outcome.error == "header Cache-Control 'no-store' not found"


@pytest.mark.parametrize(
    ("assertion", "reason"),
    [
        (
            HeaderAssertion("X-Frame-Options", "exists"),
            "header X-Frame-Options missing",
        ),
        (
            HeaderAssertion("Server-Timing", "absent"),
            "header Server-Timing found, must be absent",
        ),
        (
            HeaderAssertion("Server-Timing", "==", "db;dur=1"),
            "header Server-Timing: expected 'db;dur=1', got 'app;dur=53'",
        ),
        (
            HeaderAssertion("Server-Timing", "regex", r"^db"),
            "header Server-Timing 'app;dur=53' does not match '^db'",
        ),
    ],
)
def test_each_operator_says_why_it_failed(handle, target_server, assertion, reason):
    outcome = poll(handle, target_server, ["Server-Timing:app;dur=53"], assertion)
    assert (outcome.up, outcome.error) == (False, reason)


def test_the_first_failing_assertion_is_the_reason(handle, target_server):
    outcome = poll(
        handle,
        target_server,
        ["X-A:1"],
        HeaderAssertion("X-A", "==", "1"),
        HeaderAssertion("X-B", "exists"),
        HeaderAssertion("X-A", "==", "2"),
    )
    assert outcome.error == "header X-B missing"


def test_the_status_is_judged_before_the_headers(handle, target_server):
    outcome = poll(
        handle, target_server, [], HeaderAssertion("X-B", "exists"), status="503"
    )
    assert outcome.error == "expected 200, got 503"


def test_the_headers_of_the_final_response_after_a_redirect_count(
    handle, target_server
):
    final = "/text?" + urlencode({"header": "X-Final:yes"})
    url = target_server.url("/redirect-to?" + urlencode({"location": final}))
    target = Target(
        project_id=7,
        url=url,
        header_assertions=(HeaderAssertion("X-Final", "==", "yes"),),
    )
    outcome = run_poll(handle, Task(target, datetime.now(UTC)))
    assert (outcome.up, outcome.error) == (True, "")
