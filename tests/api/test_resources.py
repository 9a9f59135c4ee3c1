"""Results, uptime, incidents, channels, maintenance windows, tags, status."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from django.db import OperationalError
from django.utils import timezone

from projects.dashboard.queries.ranges import RANGES
from projects.dashboard.queries.uptime import uptime_by_project
from projects.models import (
    ApiKey,
    Incident,
    MaintenanceWindow,
    Notification,
    NotificationChannel,
    PollerNode,
    PollResult,
    Tag,
)
from projects.notifications.masking import MASK
from tests.support.alerting import assert_acknowledgement_audited

# Results -------------------------------------------------------------------


def test_results_come_newest_first_a_cursor_page_at_a_time(
    read_api, make_project, add_polls
):
    project = make_project()
    end = timezone.now().replace(microsecond=0)
    add_polls(project, "uuduu", end=end)
    PollResult.objects.filter(project=project, polled_at=end).update(
        dns_ms=3, connect_ms=4, tls_ms=5, first_byte_ms=6
    )

    first = read_api.get(f"/api/v1/projects/{project.pk}/results/?page_size=2")
    body = first.json()
    second = read_api.get(body["next"]).json()

    assert first.status_code == 200
    assert [r["status"] for r in body["results"]] == ["up", "up"]
    newest = body["results"][0]
    assert (newest["dns_ms"], newest["connect_ms"], newest["tls_ms"]) == (3, 4, 5)
    assert newest["first_byte_ms"] == 6
    assert [r["status"] for r in second["results"]] == ["down", "up"]
    assert second["results"][0]["error_message"] == "expected 200, got 503"


def test_results_filter_by_time_and_status(read_api, make_project, add_polls):
    project = make_project()
    end = timezone.now().replace(microsecond=0)
    add_polls(project, "uuduu", end=end)
    since = (end - timedelta(minutes=3)).isoformat()
    until = (end - timedelta(minutes=1)).isoformat()

    response = read_api.get(
        f"/api/v1/projects/{project.pk}/results/",
        {"since": since, "until": until},
    )
    down = read_api.get(f"/api/v1/projects/{project.pk}/results/?status=down")

    # The polls at end - 3 min (up) and end - 2 min (down), newest first.
    assert [r["status"] for r in response.json()["results"]] == ["down", "up"]
    assert len(down.json()["results"]) == 1


@pytest.mark.parametrize(
    "query", ["since=yesterday", "until=2026-13-01T00:00:00Z", "status=sideways"]
)
def test_bad_result_filters_are_400(read_api, make_project, query):
    project = make_project()

    response = read_api.get(f"/api/v1/projects/{project.pk}/results/?{query}")

    assert response.status_code == 400
    assert list(response.json()) == [query.split("=")[0]]


def test_uptime_is_the_dashboards(read_api, make_project, add_polls):
    project = make_project()
    add_polls(
        project,
        "uuuduuuu",
        end=timezone.now(),
        response_time_ms=[100] * 3 + [None] + [200] * 4,
    )

    body = read_api.get(f"/api/v1/projects/{project.pk}/uptime/?range=30d").json()

    dashboard = uptime_by_project([project.pk], [RANGES["30d"]], timezone.now())
    assert body["polls"] == dashboard[project.pk]["30d"].polls == 8
    assert body["failures"] == 1
    assert body["uptime_percent"] == pytest.approx(87.5)
    assert body["mean_response_time_ms"] == pytest.approx(1100 / 7)
    assert body["range"] == "30d"


def test_uptime_refuses_an_unknown_range(read_api, make_project):
    project = make_project()

    response = read_api.get(f"/api/v1/projects/{project.pk}/uptime/?range=2w")

    assert response.status_code == 400
    assert list(response.json()) == ["range"]


# Incidents -----------------------------------------------------------------


def make_incident(project, **fields) -> Incident:
    now = timezone.now()
    return Incident.objects.create(
        project=project, started_at=now, confirmed_at=now, **fields
    )


def test_incidents_filter_by_project_state_and_kind(read_api, make_project):
    one, two = make_project(), make_project()
    open_one = make_incident(one)
    make_incident(two, resolved_at=timezone.now())
    cert = make_incident(two, kind="certificate")

    def ids(query: str) -> list[int]:
        return [
            i["id"]
            for i in read_api.get(f"/api/v1/incidents/?{query}").json()["results"]
        ]

    assert ids(f"project={one.pk}") == [open_one.pk]
    assert sorted(ids("state=open")) == sorted([open_one.pk, cert.pk])
    assert ids("kind=certificate") == [cert.pk]


def test_acknowledging_an_incident_once(write_api, make_project):
    incident = make_incident(make_project())
    url = f"/api/v1/incidents/{incident.pk}/acknowledge/"

    first = write_api.post(url)
    again = write_api.post(url)

    assert first.status_code == 200
    assert first.json()["acknowledged_at"] is not None
    assert again.status_code == 409


def test_an_acknowledgement_records_the_key_and_an_audit_entry(write_api, make_project):
    incident = make_incident(make_project())

    response = write_api.post(f"/api/v1/incidents/{incident.pk}/acknowledge/")

    assert response.json()["acknowledged_by"] == "write key"
    incident.refresh_from_db()
    assert incident.acknowledged_by_key == ApiKey.objects.get(name="write key")
    assert_acknowledgement_audited(incident, actor_name="write key", via="api")


def test_a_read_key_cannot_acknowledge(read_api, make_project):
    incident = make_incident(make_project())

    response = read_api.post(f"/api/v1/incidents/{incident.pk}/acknowledge/")

    assert response.status_code == 403
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


# Channels ------------------------------------------------------------------

SECRET_URL = "https://hooks.example.com/services/T000/B000/s3cr3t-token"


def test_a_channels_url_and_secret_are_written_but_never_read_back(write_api):
    created = write_api.post(
        "/api/v1/channels/",
        {"name": "ops", "kind": "webhook", "url": SECRET_URL},
        format="json",
    )
    assert created.status_code == 201, created.json()
    channel = NotificationChannel.objects.get()
    # Generated for a new webhook and shown once, as the admin does.
    assert created.json()["generated_secret"] == channel.secret

    listed = write_api.get("/api/v1/channels/")
    shown = write_api.get(f"/api/v1/channels/{channel.pk}/")

    for text in (listed.content.decode(), shown.content.decode()):
        assert "s3cr3t-token" not in text
        assert channel.secret not in text
    assert shown.json()["destination"] == f"https://hooks.example.com/{MASK}"
    assert "url" not in shown.json()
    assert "secret" not in shown.json()


def test_a_channel_change_that_leaves_out_the_url_keeps_it(write_api, make_channel):
    channel = make_channel(url=SECRET_URL)

    response = write_api.patch(
        f"/api/v1/channels/{channel.pk}/", {"reminder_minutes": 30}, format="json"
    )

    assert response.status_code == 200, response.json()
    channel.refresh_from_db()
    assert (channel.url, channel.reminder_minutes) == (SECRET_URL, 30)


def test_channels_are_validated_by_the_admins_form(write_api):
    response = write_api.post(
        "/api/v1/channels/",
        {"name": "mail", "kind": "email", "url": "not an address"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "url": ["“not an address” is not a valid e-mail address."]
    }


def test_a_read_key_lists_channels_but_cannot_create_one(read_api, make_channel):
    make_channel()

    assert read_api.get("/api/v1/channels/").status_code == 200
    response = read_api.post(
        "/api/v1/channels/", {"name": "x", "kind": "email", "url": "a@b.org"}
    )
    assert response.status_code == 403


def test_a_test_notification_is_queued_in_the_outbox_not_sent_by_the_request(
    write_api, make_channel, django_capture_on_commit_callbacks
):
    channel = make_channel()

    with django_capture_on_commit_callbacks() as callbacks:
        response = write_api.post(f"/api/v1/channels/{channel.pk}/test/")

    assert response.status_code == 202
    queued = Notification.objects.get(pk=response.json()["notification"])
    assert (queued.event, queued.channel_id, queued.state) == (
        "test",
        channel.pk,
        "pending",
    )
    assert queued.delivery_attempts.count() == 0
    assert len(callbacks) == 1  # asks the tasks process for a delivery run


def test_a_test_to_a_disabled_channel_is_409(write_api, make_channel):
    channel = make_channel(enabled=False)

    response = write_api.post(f"/api/v1/channels/{channel.pk}/test/")

    assert response.status_code == 409
    assert not Notification.objects.exists()


# Maintenance windows and tags ----------------------------------------------


def test_maintenance_windows_are_created_and_checked_as_in_the_admin(
    write_api, make_project
):
    project = make_project()
    url = "/api/v1/maintenance-windows/"

    no_projects = write_api.post(
        url,
        {
            "name": "db",
            "repeat": "weekly",
            "weekdays": [6],
            "start_time": "02:00",
            "end_time": "04:00",
        },
        format="json",
    )
    created = write_api.post(
        url,
        {
            "name": "db",
            "repeat": "weekly",
            "weekdays": [6],
            "start_time": "02:00",
            "end_time": "04:00",
            "projects": [project.pk],
        },
        format="json",
    )

    assert no_projects.status_code == 400
    assert no_projects.json() == {
        "projects": ["Choose the projects, or tick “All projects”."]
    }
    assert created.status_code == 201, created.json()
    window = MaintenanceWindow.objects.get()
    assert list(window.projects.all()) == [project]
    assert write_api.delete(f"{url}{window.pk}/").status_code == 204


def test_tags_crud_with_the_models_colour_rule(write_api):
    bad = write_api.post(
        "/api/v1/tags/", {"name": "prod", "color": "red"}, format="json"
    )
    made = write_api.post(
        "/api/v1/tags/", {"name": "prod", "color": "#1f77b4"}, format="json"
    )
    tag = Tag.objects.get()
    renamed = write_api.patch(f"/api/v1/tags/{tag.pk}/", {"name": "production"})

    assert bad.json() == {"color": ["Enter a colour as #rrggbb, for example #1f77b4."]}
    assert made.status_code == 201
    assert renamed.json()["name"] == "production"
    assert write_api.delete(f"/api/v1/tags/{tag.pk}/").status_code == 204


# Status --------------------------------------------------------------------


@pytest.mark.django_db
def test_status_says_whether_a_poller_reported_lately(settings):
    settings.POLLER_SILENT_SECONDS = 60
    now = timezone.now()
    client = APIClient()
    assert client.get("/api/v1/status/").json()["poller_alive"] is False

    PollerNode.objects.create(
        name="p1", host="h", pid=1, started_at=now, last_seen_at=now
    )
    body = client.get("/api/v1/status/").json()

    assert body["status"] == "ok"
    assert body["poller_alive"] is True
    PollerNode.objects.update(last_seen_at=now - timedelta(seconds=61))
    assert client.get("/api/v1/status/").json()["status"] == "degraded"


class Unreachable:
    """Stands in for a model manager when the database does not answer."""

    def __getattr__(self, name):
        raise OperationalError("could not connect to server")


def test_status_is_503_when_the_database_does_not_answer(db, monkeypatch):
    monkeypatch.setattr(PollerNode, "objects", Unreachable())

    response = APIClient().get("/api/v1/status/")

    assert response.status_code == 503
    assert response.json()["status"] == "down"
    assert response.json()["database"] is False


def test_any_endpoint_is_a_json_503_when_the_database_does_not_answer(
    read_api, monkeypatch
):
    monkeypatch.setattr(Tag, "objects", Unreachable())

    response = read_api.get("/api/v1/tags/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {
        "detail": "The database did not answer; try again shortly."
    }


def test_uptime_gives_the_percentiles_of_the_range(read_api, make_project, add_polls):
    project = make_project()
    times = list(range(10, 1010, 10))
    add_polls(project, "u" * 100, end=timezone.now(), response_time_ms=times)

    body = read_api.get(f"/api/v1/projects/{project.pk}/uptime/?range=24h").json()

    assert body["p50_ms"] == pytest.approx(500, rel=0.04)
    assert body["p90_ms"] == pytest.approx(900, rel=0.04)
    assert body["p95_ms"] == pytest.approx(950, rel=0.04)
    assert body["p99_ms"] == pytest.approx(990, rel=0.04)
