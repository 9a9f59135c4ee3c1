"""The service kinds (PostgreSQL, MySQL, Redis): their URL rules, shared
by the admin, the API and the YAML import, and their write-only
passwords, masked wherever a project is shown or exported."""

from __future__ import annotations

import pytest
import yaml

from django.core.exceptions import ValidationError

from projects.as_code.apply import import_projects
from projects.as_code.export import export_yaml
from projects.checks.credentials import RETYPE, masked_url, unmasked_url
from projects.checks.kinds import kind_of
from projects.checks.validators import validate_http_url
from projects.forms.project import ProjectForm
from projects.models import Project

SECRET = "s3cr3t-pw"
VALID = {
    "name": "database",
    "url": f"postgres://monitor:{SECRET}@db.example.com:5432/app?query=SELECT%201",
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


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("postgres://db.example.com/app", "postgres"),
        ("postgresql://u:p@db.example.com:5433/app?sslmode=require", "postgres"),
        ("mysql://root@db.example.com/test?query=SELECT%201&expect=1", "mysql"),
        ("mysql://db.example.com?ssl=true", "mysql"),
        ("redis://cache.example.com", "redis"),
        ("rediss://:pw@cache.example.com:6380/2?command=PING&expect=PONG", "redis"),
        ("grpc://api.example.com:50051/shop.Cart", "grpc"),
        ("grpcs://api.example.com:443", "grpc"),
        ("smtp://mail.example.com:587?starttls=required", "mail"),
        ("smtps://u:p@mail.example.com", "mail"),
        ("imap://mail.example.com?starttls=off", "mail"),
        ("pop3s://mail.example.com:995/", "mail"),
        ("wss://live.example.com/socket?token=abc&send=ping&expect=pong", "websocket"),
        ("ws://127.0.0.1:8080/", "websocket"),
    ],
)
def test_a_service_url_is_accepted_and_chooses_its_kind(url, name):
    validate_http_url(url)

    assert kind_of(url).name == name


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "postgres://db.example.com/app?timeout=3",
            "A PostgreSQL check does not know “timeout”: use ?query=, ?expect= "
            "or ?sslmode=.",
        ),
        (
            "postgres://db.example.com/app?expect=1",
            "“expect” compares the first value the query answers: add ?query=.",
        ),
        (
            "postgres://db.example.com/app?sslmode=sometimes",
            "sslmode must be one of disable, allow, prefer, require, "
            "verify-ca, verify-full.",
        ),
        ("mysql://db.example.com/test?ssl=maybe", "ssl is true or false."),
        (
            "redis://cache.example.com/cache",
            "The path is the database's number: "
            "redis://:secret@cache.example.com:6379/0?command=PING&expect=PONG.",
        ),
        (
            "redis://cache.example.com/0?query=PING&query=INFO",
            "“query” is given twice.",
        ),
        (
            "grpc://api.example.com/shop.Cart",
            "A gRPC check needs a port: "
            "grpc://api.example.com:50051/my.package.Service.",
        ),
        (
            "grpc://api.example.com:50051/a/b",
            "The path is one service's full name: "
            "grpc://api.example.com:50051/my.package.Service.",
        ),
        (
            "grpc://u:p@api.example.com:50051/",
            "A gRPC health check cannot log in: remove the user name.",
        ),
        (
            "smtp://mail.example.com?starttls=maybe",
            "starttls is required, optional or off.",
        ),
        (
            "smtps://mail.example.com?starttls=off",
            "With smtps:// TLS comes first: the URL takes no ?starttls=off.",
        ),
        (
            "wss://live.example.com/socket?expect=pong",
            "“expect” is looked for in the reply to a message: add ?send=, "
            "e.g. wss://live.example.com/socket?send=ping&expect=pong.",
        ),
        (
            "imap://mail.example.com/INBOX",
            "A mail server check is scheme://host:port, with no path: "
            "smtp://mail.example.com:587?starttls=required.",
        ),
    ],
)
def test_a_service_url_that_does_not_fit_says_what_to_change(url, message):
    with pytest.raises(ValidationError) as refused:
        validate_http_url(url)

    assert refused.value.messages == [message]


@pytest.mark.django_db
def test_http_options_on_a_database_check_are_field_errors():
    form = ProjectForm(data={**VALID, "keyword": "ok", "method": "POST"})

    assert not form.is_valid()
    assert form.errors["keyword"] == [
        "A PostgreSQL check logs in and runs a query: there is no body to search."
    ]
    assert form.errors["method"] == [
        "A PostgreSQL check logs in and runs a query: leave the method at GET."
    ]


def test_the_password_is_masked_and_nothing_else():
    url = f"redis://default:{SECRET}@cache.example.com:6379/0?command=PING"

    assert (
        masked_url(url) == "redis://default:***@cache.example.com:6379/0?command=PING"
    )
    assert masked_url("redis://cache.example.com/0") == "redis://cache.example.com/0"
    # HTTP(S) URLs are shown as they are (their credentials go with the request).
    assert masked_url("https://u:p@example.com/") == "https://u:p@example.com/"


def test_the_mask_sent_back_keeps_the_stored_password_for_the_same_server():
    stored = VALID["url"]

    assert unmasked_url(masked_url(stored), stored) == stored
    changed = masked_url(stored).replace("SELECT%201", "SELECT%202")
    assert unmasked_url(changed, stored) == stored.replace("SELECT%201", "SELECT%202")


@pytest.mark.parametrize(
    "elsewhere",
    [
        "postgres://monitor:***@attacker.example.com:5432/app",
        "postgres://monitor:***@db.example.com:6543/app",
        "postgres://admin:***@db.example.com:5432/app",
        "mysql://monitor:***@db.example.com:5432/app",
    ],
)
def test_the_mask_sent_for_another_server_or_user_must_be_typed_again(elsewhere):
    with pytest.raises(ValidationError) as refused:
        unmasked_url(elsewhere, VALID["url"])

    assert refused.value.messages == [RETYPE]


@pytest.mark.django_db
def test_the_admin_form_shows_the_password_masked_and_keeps_it():
    form = ProjectForm(data=VALID)
    assert form.is_valid(), form.errors
    project = form.save()

    editing = ProjectForm(instance=project)
    assert editing.initial["url"] == masked_url(VALID["url"])
    assert SECRET not in str(editing)

    data = {**VALID, "url": editing.initial["url"], "name": "renamed"}
    saved = ProjectForm(data=data, instance=project)
    assert saved.is_valid(), saved.errors
    saved.save()
    project.refresh_from_db()
    assert project.url == VALID["url"]
    assert project.name == "renamed"


@pytest.mark.django_db
def test_the_api_shows_the_password_masked_and_a_patch_keeps_it(write_api):
    created = write_api.post(
        "/api/v1/projects/", {**VALID, "headers": {}}, format="json"
    )
    assert created.status_code == 201, created.content
    shown = created.json()["url"]
    assert SECRET not in created.content.decode()
    assert shown == masked_url(VALID["url"])

    patched = write_api.patch(
        f"/api/v1/projects/{created.json()['id']}/",
        {"url": shown, "timeout_seconds": 5},
        format="json",
    )

    assert patched.status_code == 200, patched.content
    assert Project.objects.get().url == VALID["url"]
    moved = write_api.patch(
        f"/api/v1/projects/{created.json()['id']}/",
        {"url": shown.replace("db.example.com", "elsewhere.example.com")},
        format="json",
    )
    assert moved.status_code == 400
    assert moved.json()["url"] == [RETYPE]


@pytest.mark.django_db
def test_the_yaml_export_writes_the_password_masked():
    form = ProjectForm(data=VALID)
    assert form.is_valid(), form.errors
    form.save()

    text = export_yaml()

    assert SECRET not in text
    [entry] = yaml.safe_load(text)["projects"]
    assert entry["url"] == masked_url(VALID["url"])


@pytest.mark.django_db
def test_importing_the_export_again_changes_nothing_and_keeps_the_password():
    form = ProjectForm(data=VALID)
    assert form.is_valid(), form.errors
    form.save()

    plan = import_projects(export_yaml())

    assert plan.is_empty, plan.lines()
    assert Project.objects.get().url == VALID["url"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        VALID["url"],
        f"mysql://root:{SECRET}@db.example.com/test",
        f"rediss://:{SECRET}@cache.example.com:6380/0",
        f"smtp://monitor:{SECRET}@mail.example.com:587",
    ],
)
def test_every_page_shows_a_service_project_with_its_password_masked(
    admin_client, make_project, url
):
    project = make_project(name="service", url=url)
    pages = [
        project.get_absolute_url(),
        "/",
        "/admin/projects/project/",
        f"/admin/projects/project/{project.pk}/change/",
        f"/badge/{project.badge_key}/status.svg",
        f"/badge/{project.badge_key}/response-time.svg",
    ]

    for page in pages:
        response = admin_client.get(page)
        assert response.status_code == 200, page
        assert SECRET not in response.content.decode(), page
    detail = admin_client.get(project.get_absolute_url()).content.decode()
    assert f"{project.check_kind.label} {masked_url(url)}" in detail


@pytest.mark.parametrize(
    ("url", "watched"),
    [
        ("grpcs://api.example.com:443/shop.Cart", True),
        ("grpc://api.example.com:50051/shop.Cart", False),
        ("wss://live.example.com/socket", True),
        ("smtps://mail.example.com", True),
        ("redis://cache.example.com:6379/0", False),
    ],
)
def test_the_kinds_whose_polls_read_a_certificate_have_its_expiry_watched(url, watched):
    assert kind_of(url).reads_certificate(url) is watched
