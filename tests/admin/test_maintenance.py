"""Maintenance windows in the admin: one-off and weekly windows, for chosen
projects or all, and each mistake shown on its own field."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from django.urls import reverse

from projects.models import MaintenanceWindow

pytestmark = pytest.mark.django_db

ADD_URL = reverse("admin:projects_maintenancewindow_add")
LIST_URL = reverse("admin:projects_maintenancewindow_changelist")

ONCE = {
    "name": "database upgrade",
    "enabled": "on",
    "repeat": "once",
    "starts_at_0": "2026-11-22",
    "starts_at_1": "02:00:00",
    "ends_at_0": "2026-11-22",
    "ends_at_1": "04:00:00",
    "time_zone": "UTC",
    "all_projects": "on",
}
WEEKLY = {
    "name": "Sunday backups",
    "enabled": "on",
    "repeat": "weekly",
    "weekdays": ["6"],
    "start_time": "23:30",
    "end_time": "00:30",
    "time_zone": "Europe/Berlin",
}


def field_errors(response, field: str) -> list[str]:
    return response.context["adminform"].form.errors.get(field, [])


def test_it_adds_a_one_off_window_for_all_projects(admin_client):
    response = admin_client.post(ADD_URL, ONCE)

    assert response.status_code == 302
    window = MaintenanceWindow.objects.get()
    assert window.all_projects is True
    assert window.starts_at == datetime(2026, 11, 22, 2, tzinfo=UTC)
    assert window.ends_at == datetime(2026, 11, 22, 4, tzinfo=UTC)


def test_it_adds_a_weekly_window_for_chosen_projects(admin_client, make_project):
    shop, blog = make_project(name="shop"), make_project(name="blog")

    response = admin_client.post(ADD_URL, {**WEEKLY, "projects": [shop.pk, blog.pk]})

    assert response.status_code == 302
    window = MaintenanceWindow.objects.get()
    assert window.weekdays == [6]
    assert (window.start_time, window.end_time) == (time(23, 30), time(0, 30))
    assert set(window.projects.all()) == {shop, blog}
    assert window.schedule_display == "Sun 23:30-00:30 Europe/Berlin"


def test_the_other_kinds_fields_are_not_kept(admin_client):
    admin_client.post(ADD_URL, {**ONCE, "weekdays": ["0"], "start_time": "01:00"})

    window = MaintenanceWindow.objects.get()
    assert (window.weekdays, window.start_time) == ([], None)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"ends_at_1": "01:00:00"}, "ends_at", "end must come after the start"),
        ({"starts_at_0": "", "starts_at_1": ""}, "starts_at", "needs a start"),
        ({"all_projects": ""}, "projects", "Choose the projects"),
        (
            {"repeat": "weekly", "start_time": "01:00", "end_time": "02:00"},
            "weekdays",
            "at least one day",
        ),
        (
            {"repeat": "weekly", "weekdays": ["1"], "end_time": "02:00"},
            "start_time",
            "needs a start and an end time",
        ),
        ({"time_zone": "Mars/Olympus"}, "time_zone", "Unknown time zone"),
    ],
)
def test_mistakes_are_shown_on_their_field(admin_client, change, field, message):
    response = admin_client.post(ADD_URL, {**ONCE, **change})

    assert response.status_code == 200
    assert any(message in error for error in field_errors(response, field))
    assert not MaintenanceWindow.objects.exists()


def test_the_list_says_when_and_whether_it_is_active(admin_client):
    MaintenanceWindow.objects.create(
        name="always",
        repeat="weekly",
        weekdays=list(range(7)),
        start_time=time(0),
        end_time=time(0),
        all_projects=True,
    )

    page = admin_client.get(LIST_URL).content.decode()

    assert "Mon, Tue, Wed, Thu, Fri, Sat, Sun 00:00-00:00 UTC" in page
    assert 'alt="True"' in page
