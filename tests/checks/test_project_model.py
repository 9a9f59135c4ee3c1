from __future__ import annotations

from datetime import UTC, datetime

import pytest

from django.core.exceptions import ValidationError

from projects.checks.kinds import scheme_list
from projects.forms.project import ProjectForm
from projects.models import Project

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
}


def form_errors(**changes) -> dict[str, list[str]]:
    form = ProjectForm(data={**VALID, **changes})
    assert form.is_valid() is False
    return form.errors


@pytest.mark.django_db
def test_a_valid_form_saves_a_project():
    form = ProjectForm(data=VALID)
    assert form.is_valid(), form.errors
    project = form.save()
    assert project.headers == {}
    assert project.interval_seconds == 300


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "file:///etc/passwd",
            f"Only {scheme_list()} URLs can be polled, not file:",
        ),
        (
            "ftp://example.com",
            f"Only {scheme_list()} URLs can be polled, not ftp:",
        ),
        ("javascript:alert(1)", "not javascript:"),
        ("not a url", "cannot contain spaces"),
        ("example.com/health", "Enter a full URL starting with http://"),
        ("http://", "The URL has no host name."),
        ("https:///path", "The URL has no host name."),
        ("http://exa mple.com", "cannot contain spaces"),
        ("http://example.com:99999/", "port must be a number"),
        ("http://exa_mple..com/", "is not a valid host name"),
        ("http://example.com/" + "a" * 2000, "at most 2000 characters"),
    ],
)
def test_it_rejects_urls_that_cannot_be_polled(url, message):
    errors = form_errors(url=url)
    assert list(errors) == ["url"]
    assert message in errors["url"][0]
    assert Project.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/health",
        "https://example.com",
        "HTTPS://EXAMPLE.COM/a?b=c#d",
        "http://internal-service:3000/ping",
        "http://[::1]:8000/",
        "https://bücher.example/",
    ],
)
def test_it_accepts_http_urls(url):
    form = ProjectForm(data={**VALID, "url": url})
    assert form.is_valid() is True, form.errors


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("expected_status", "99", "Status codes run from 100 to 599; 99 is not one."),
        ("expected_status", "600", "Status codes run from 100 to 599; 600 is not one."),
        ("interval", 0, "greater than or equal to 1"),
        ("interval", -5, "greater than or equal to 1"),
        ("timeout_seconds", 0, "greater than or equal to 1"),
        ("timeout_seconds", 121, "less than or equal to 120"),
        ("method", "TRACE", "Select a valid choice"),
        ("interval_unit", "days", "Select a valid choice"),
        ("name", "x" * 201, "at most 200 characters"),
    ],
)
def test_it_rejects_out_of_range_values(field, value, message):
    errors = form_errors(**{field: value})
    assert list(errors) == [field]
    assert message in errors[field][0]


@pytest.mark.django_db
def test_it_rejects_an_interval_below_the_minimum(settings):
    settings.MIN_POLL_INTERVAL = 10
    errors = form_errors(interval=5, interval_unit="seconds", timeout_seconds=1)
    assert errors == {
        "interval": ["The interval must be at least 10 seconds (this is 5 s)."]
    }


@pytest.mark.django_db
def test_it_rejects_an_interval_over_a_day():
    errors = form_errors(interval=25, interval_unit="hours")
    assert errors == {"interval": ["The interval can be at most 24 hours."]}


@pytest.mark.django_db
def test_it_accepts_exactly_a_day_and_exactly_the_minimum(settings):
    settings.MIN_POLL_INTERVAL = 10
    for interval, unit in [(24, "hours"), (10, "seconds")]:
        data = {
            **VALID,
            "interval": interval,
            "interval_unit": unit,
            "timeout_seconds": 5,
        }
        assert ProjectForm(data=data).is_valid() is True


@pytest.mark.django_db
def test_it_rejects_a_timeout_longer_than_the_interval():
    errors = form_errors(interval=30, interval_unit="seconds", timeout_seconds=60)
    assert errors == {
        "timeout_seconds": ["The timeout cannot be longer than the interval (30 s)."]
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ("not json", "Headers must be valid JSON"),
        ("[]", "Headers must be a JSON object"),
        ('["Accept"]', "Headers must be a JSON object"),
        ('"text"', "Headers must be a JSON object"),
        ("42", "Headers must be a JSON object"),
        ('{"Bad Name": "x"}', "“Bad Name” is not a valid header name"),
        ('{"X-Ok:": "x"}', "is not a valid header name"),
        ('{"X-Count": 5}', "must be a string in quotes"),
        ('{"X-Evil": "a\\r\\nSet-Cookie: x=1"}', "cannot contain line breaks"),
    ],
)
def test_it_rejects_bad_headers(headers, message):
    errors = form_errors(headers=headers)
    assert list(errors) == ["headers"]
    assert message in errors["headers"][0]


@pytest.mark.django_db
def test_blank_headers_mean_no_headers():
    form = ProjectForm(data={**VALID, "headers": ""})
    assert form.is_valid() is True
    assert form.save().headers == {}


@pytest.mark.django_db
def test_names_are_unique(make_project):
    make_project(name="homepage")
    errors = form_errors(name="homepage")
    assert errors == {"name": ["This team already has a project with this name."]}


@pytest.mark.django_db
def test_model_clean_applies_the_same_rules_without_a_form():
    project = Project(
        name="x",
        url="ftp://example.com",
        headers=[],
        interval=1,
        interval_unit="seconds",
    )
    with pytest.raises(ValidationError) as caught:
        project.full_clean()
    assert set(caught.value.message_dict) == {"url", "headers", "interval"}


@pytest.mark.parametrize(
    ("interval", "unit", "seconds", "display"),
    [
        (30, "seconds", 30, "every 30 s"),
        (5, "minutes", 300, "every 5 min"),
        (2, "hours", 7200, "every 2 h"),
    ],
)
@pytest.mark.django_db  # a new project asks for the install's first team
def test_interval_in_seconds_and_words(interval, unit, seconds, display):
    project = Project(interval=interval, interval_unit=unit)
    assert project.interval_seconds == seconds
    assert project.interval_display == display


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("new_url", "kept"),
    [("https://127.0.0.1:9/moved", True), ("http://127.0.0.1:9/plain", False)],
)
def test_a_url_no_longer_on_https_forgets_the_certificate(make_project, new_url, kept):
    expires = datetime(2027, 3, 1, tzinfo=UTC)
    project = make_project(url="https://127.0.0.1:9/")
    Project.objects.filter(pk=project.pk).update(tls_expires_at=expires)
    project.refresh_from_db()

    project.url = new_url
    project.save()

    project.refresh_from_db()
    assert project.tls_expires_at == (expires if kept else None)
