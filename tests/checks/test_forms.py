"""Validation of "what counts as up" and the options around it: every bad
value or combination is an error on the field to change."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from projects.forms.project import ProjectForm
from projects.models import Project

pytestmark = pytest.mark.django_db

VALID = {
    "name": "homepage",
    "url": "https://example.com/health",
    "method": "GET",
    "headers": "{}",
    "body": "",
    "expected_status": "200",
    "interval": 5,
    "interval_unit": "minutes",
    "timeout_seconds": 10,
    "enabled": True,
    "follow_redirects": True,
    "verify_tls": True,
}


def errors_of(**changes) -> dict[str, list[str]]:
    form = ProjectForm(data={**VALID, **changes})
    assert form.is_valid() is False
    return dict(form.errors)


def saved(**changes) -> Project:
    form = ProjectForm(data={**VALID, **changes})
    assert form.is_valid(), form.errors
    return form.save()


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("200", "200"),
        ("200-299", "200-299"),
        ("200 - 299,301 , 418", "200-299, 301, 418"),
        ("204,", "204"),
    ],
)
def test_expected_status_takes_a_code_a_range_or_a_list(typed, stored):
    assert saved(expected_status=typed).expected_status == stored


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        (
            "2xx",
            "“2xx” is not a status code: use a code like 200, a range like "
            "200-299, or a list like 200-299, 301.",
        ),
        ("200-600", "Status codes run from 100 to 599; 600 is not one."),
        ("299-200", "In 299-200 the first code must not be above the second."),
    ],
)
def test_bad_expected_status_is_a_field_error(typed, message):
    assert errors_of(expected_status=typed) == {"expected_status": [message]}


def test_a_keyword_and_its_options_are_saved():
    project = saved(
        keyword="Welcome", keyword_mode="not_contains", keyword_case_sensitive=True
    )

    assert (project.keyword, project.keyword_mode, project.keyword_case_sensitive) == (
        "Welcome",
        "not_contains",
        True,
    )


def test_left_out_choices_keep_their_defaults():
    project = saved(keyword="Welcome")

    assert project.keyword_mode == "contains"
    assert project.json_operator == "=="


@pytest.mark.parametrize(
    ("typed", "stored"), [("", 14), ("0", 0), ("1", 1), ("30", 30), ("365", 365)]
)
def test_certificate_warning_days_default_to_14_and_take_0_to_365(typed, stored):
    assert saved(tls_expiry_warning_days=typed).tls_expiry_warning_days == stored


def test_certificate_warning_days_left_out_are_14():
    assert saved().tls_expiry_warning_days == 14


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("-1", "Ensure this value is greater than or equal to 0."),
        ("366", "Ensure this value is less than or equal to 365."),
        ("100000", "Ensure this value is less than or equal to 365."),
        ("two weeks", "Enter a whole number."),
        ("1.5", "Enter a whole number."),
    ],
)
def test_certificate_warning_days_out_of_range_are_a_field_error(typed, message):
    assert errors_of(tls_expiry_warning_days=typed) == {
        "tls_expiry_warning_days": [message]
    }


def test_certificate_warning_days_are_checked_by_the_model_too(make_project):
    with pytest.raises(ValidationError) as raised:
        make_project(tls_expiry_warning_days=366)

    assert raised.value.message_dict == {
        "tls_expiry_warning_days": ["Ensure this value is less than or equal to 365."]
    }


def test_an_unknown_keyword_mode_is_a_field_error():
    assert list(errors_of(keyword="x", keyword_mode="maybe")) == ["keyword_mode"]


def test_a_json_assertion_is_saved():
    project = saved(json_query="checks.db.ok", json_operator="==", json_expected="true")

    assert (project.json_query, project.json_expected) == ("checks.db.ok", "true")


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"json_query": "status..x", "json_expected": "ok"},
            "json_query",
            "“status..x” is not a JMESPath query (unexpected “.” at character 8). "
            "Examples: status, checks.database.ok, items[0].state.",
        ),
        (
            {"json_query": "items[0", "json_expected": "ok"},
            "json_query",
            "“items[0” is not a JMESPath query (it ends too soon). "
            "Examples: status, checks.database.ok, items[0].state.",
        ),
        (
            {"json_expected": "ok"},
            "json_query",
            "Enter the query whose result is compared.",
        ),
        (
            {"json_query": "status"},
            "json_expected",
            "Enter the value the query's result must match.",
        ),
        (
            {"json_query": "load", "json_operator": "<", "json_expected": "low"},
            "json_expected",
            "< compares numbers; “low” is not a number.",
        ),
        (
            {"json_query": "load", "json_operator": ">", "json_expected": '"5"'},
            "json_expected",
            '> compares numbers; “"5"” is not a number.',
        ),
        (
            {"json_query": "s", "json_operator": "~", "json_expected": "ok"},
            "json_operator",
            "Select a valid choice. ~ is not one of the available choices.",
        ),
    ],
)
def test_bad_json_assertions_are_field_errors(changes, field, message):
    assert errors_of(**changes) == {field: [message]}


def test_numbers_compare_with_less_and_greater():
    project = saved(json_query="load", json_operator="<", json_expected="2.5")

    assert project.json_operator == "<"


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        (
            {"method": "HEAD", "keyword": "Welcome"},
            {"keyword": ["A HEAD request gets no body to check: use GET."]},
        ),
        (
            {"method": "HEAD", "json_query": "status", "json_expected": "ok"},
            {"json_query": ["A HEAD request gets no body to check: use GET."]},
        ),
        (
            {"url": "tcp://db.example.com:5432", "keyword": "Welcome"},
            {
                "keyword": [
                    "A TCP check only opens a connection: there is no body to search."
                ]
            },
        ),
        (
            {
                "url": "tcp://db.example.com:5432",
                "json_query": "a",
                "json_expected": "1",
            },
            {
                "json_query": [
                    "A TCP check only opens a connection: there is no body to query."
                ]
            },
        ),
        (
            {"url": "tcp://db.example.com:5432", "headers": '{"X-A": "1"}'},
            {"headers": ["A TCP check only opens a connection: it sends no headers."]},
        ),
        (
            {"url": "tcp://db.example.com:5432", "body": "hello"},
            {"body": ["A TCP check only opens a connection: it sends no body."]},
        ),
        (
            {"url": "tcp://db.example.com:5432", "method": "POST"},
            {
                "method": [
                    "A TCP check only opens a connection: leave the method at GET."
                ]
            },
        ),
        (
            {"url": "tcp://db.example.com:5432", "expected_status": "200-299"},
            {
                "expected_status": [
                    "A TCP check only opens a connection: there is no "
                    "status code; leave it at 200."
                ]
            },
        ),
    ],
)
def test_options_that_do_not_apply_are_errors_on_their_field(changes, errors):
    assert errors_of(**changes) == errors


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "tcp://db.example.com",
            "A TCP check needs a port: tcp://db.example.com:5432.",
        ),
        (
            "tcp://db.example.com:5432/x",
            "A TCP check is only tcp://host:port, with no path or query, e.g. "
            "tcp://db.example.com:5432.",
        ),
        (
            "tcp://me@db.example.com:5432",
            "A TCP check cannot log in: remove the user name.",
        ),
        (
            "tcp://db.example.com:0",
            "A TCP check needs a port: tcp://db.example.com:5432.",
        ),
        (
            "tcp://db.example.com:70000",
            "The URL's port must be a number from 1 to 65535.",
        ),
    ],
)
def test_a_tcp_url_is_host_and_port(url, message):
    assert errors_of(url=url) == {"url": [message]}


@pytest.mark.parametrize("url", ["tcp://db.example.com:5432", "tcp://[::1]:6379"])
def test_a_tcp_project_is_saved(url):
    assert saved(url=url).is_tcp is True


def test_a_slow_limit_is_saved():
    assert saved(max_response_time_ms=1000).max_response_time_ms == 1000


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "Ensure this value is greater than or equal to 1."),
        ("-5", "Ensure this value is greater than or equal to 0."),
        (
            "10000",
            "Must be below the timeout (10 s = 10,000 ms), or the poll times "
            "out first.",
        ),
    ],
)
def test_a_slow_limit_must_be_positive_and_below_the_timeout(value, message):
    assert message in errors_of(max_response_time_ms=value)["max_response_time_ms"]


def test_redirects_and_verification_can_be_turned_off():
    project = saved(follow_redirects=False, verify_tls=False)

    assert project.follow_redirects is False
    assert project.verify_tls is False


def test_the_admin_groups_the_options_in_sections(admin_client):
    response = admin_client.get(reverse("admin:projects_project_add"))

    page = response.content.decode()
    sections = [
        "Schedule and alerts",
        "HTTP(S): what counts as up",
        "HTTP(S) request (http://, https://)",
        "UDP and SSH (udp://, ssh://)",
        "DNS (dns://)",
        "Ping (icmp://)",
        "Every kind",
    ]
    positions = [page.index(f">{title}</h2>") for title in sections]
    assert positions == sorted(positions)
    assert "anyone between the monitor and the server could answer" in page
    assert "200-299, 301, 418" in page


def test_the_project_page_says_what_counts_as_up(admin_client, make_project):
    project = make_project(
        expected_status="200-299",
        keyword="Welcome",
        json_query="status",
        json_expected="ok",
        max_response_time_ms=1500,
    )

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert (
        "Up when: status 200-299 · the body contains “Welcome” · "
        "JSON status == ok · faster than 1,500 ms"
    ) in page


def test_the_project_page_shows_a_tcp_project_as_a_port(admin_client, make_project):
    project = make_project(url="tcp://127.0.0.1:5432")

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert "TCP port tcp://127.0.0.1:5432" in page
    assert "Up when: the port accepts a connection" in page


def test_a_heartbeat_project_has_no_url_and_gets_a_ping_key():
    project = saved(kind="heartbeat", url="", grace_seconds=120)

    assert project.is_heartbeat is True
    assert project.ping_key is not None
    assert project.ping_deadline is not None


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        (
            {"kind": "heartbeat"},
            {
                "url": [
                    "A heartbeat project is not polled: leave the URL empty; its "
                    "job calls the project's ping URL."
                ]
            },
        ),
        (
            {"kind": "heartbeat", "url": "", "keyword": "ok"},
            {
                "keyword": [
                    "A heartbeat project is not polled: there is no body to search."
                ]
            },
        ),
        (
            {"kind": "heartbeat", "url": "", "max_response_time_ms": "500"},
            {
                "max_response_time_ms": [
                    "A heartbeat project is not polled: there is no response time."
                ]
            },
        ),
        ({"url": ""}, {"url": ["Enter the URL to poll."]}),
        (
            {"kind": "heartbeat", "url": "", "grace_seconds": "-1"},
            {"grace_seconds": ["Ensure this value is greater than or equal to 0."]},
        ),
        (
            {"kind": "heartbeat", "url": "", "grace_seconds": "86401"},
            {"grace_seconds": ["Ensure this value is less than or equal to 86400."]},
        ),
    ],
)
def test_heartbeat_options_are_checked_on_their_fields(changes, errors):
    assert errors_of(**changes) == errors


def test_changing_a_heartbeats_schedule_restarts_its_deadline():
    project = saved(kind="heartbeat", url="", interval=1, interval_unit="hours")
    form = ProjectForm(
        instance=project,
        data={
            **VALID,
            "kind": "heartbeat",
            "url": "",
            "interval": 2,
            "interval_unit": "minutes",
            "grace_seconds": 60,
        },
    )
    assert form.is_valid(), form.errors

    before = timezone.now()
    form.save()

    project.refresh_from_db()
    assert before + timedelta(seconds=180) <= project.ping_deadline
    assert project.ping_deadline <= timezone.now() + timedelta(seconds=180)


def test_renaming_a_heartbeat_keeps_its_deadline():
    project = saved(kind="heartbeat", url="")
    deadline = project.ping_deadline
    form = ProjectForm(
        instance=project,
        data={
            **VALID,
            "kind": "heartbeat",
            "url": "",
            "grace_seconds": 60,
            "name": "renamed",
        },
    )
    assert form.is_valid(), form.errors

    assert form.save().ping_deadline == deadline


def test_the_project_page_shows_a_heartbeats_ping_url(admin_client):
    project = saved(kind="heartbeat", url="")

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert f"http://testserver/ping/{project.ping_key}" in page
    assert "Up when: a ping every 5 min, up to 60 s late" in page


def test_the_admin_shows_the_ping_path(admin_client):
    project = saved(kind="heartbeat", url="")

    page = admin_client.get(
        reverse("admin:projects_project_change", args=[project.pk])
    ).content.decode()

    assert f"<code>/ping/{project.ping_key}</code>" in page


def test_a_new_heartbeat_alerts_at_the_first_missed_ping_unless_told_otherwise():
    assert saved(kind="heartbeat", url="").failure_threshold == 1
    assert (
        saved(kind="heartbeat", url="", name="b", failure_threshold=2).failure_threshold
        == 2
    )
    assert saved(name="polled").failure_threshold == 3


def test_an_existing_heartbeats_threshold_is_kept_on_edit():
    project = saved(kind="heartbeat", url="", failure_threshold=2)
    form = ProjectForm(
        instance=project,
        data={
            **VALID,
            "kind": "heartbeat",
            "url": "",
            "name": "renamed",
            "failure_threshold": 2,
        },
    )
    assert form.is_valid(), form.errors

    assert form.save().failure_threshold == 2
