"""The store turns a project's checks into the poller's Target."""

from __future__ import annotations

import pytest

from polling.engine.types import JsonAssertion, Keyword
from projects.models import Project
from tests.support.factories import load_target

pytestmark = pytest.mark.django_db


def test_a_projects_checks_become_its_targets(make_project):
    project = make_project(
        expected_status="200-299, 301",
        keyword="Welcome",
        keyword_mode="not_contains",
        keyword_case_sensitive=True,
        json_query="checks.queue",
        json_operator="<",
        json_expected="10",
        max_response_time_ms=800,
        follow_redirects=False,
        verify_tls=False,
    )

    target = load_target(project.pk)

    assert target.expected_status == ((200, 299), (301, 301))
    assert target.keyword == Keyword("Welcome", present=False, case_sensitive=True)
    assert target.json_assertion == JsonAssertion("checks.queue", "<", 10)
    assert target.max_response_time_ms == 800
    assert target.follow_redirects is False
    assert target.verify_tls is False
    assert target.problem == ""


def test_a_project_without_content_checks_reads_no_body(make_project):
    target = load_target(make_project().pk)

    assert (target.keyword, target.json_assertion) == (None, None)
    assert target.reads_body is False


def test_an_expected_value_that_is_not_json_is_text(make_project):
    project = make_project(json_query="status", json_expected="all good")

    assert load_target(project.pk).json_assertion.expected == "all good"


def test_a_stored_status_the_admin_would_refuse_fails_every_poll(make_project):
    project = make_project()
    Project.objects.filter(pk=project.pk).update(expected_status="2xx")

    target = load_target(project.pk)

    assert target.problem.startswith("invalid expected status: “2xx” is not a status")
