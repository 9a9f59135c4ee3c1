"""The incidents page: open ones first, then the most recent."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from projects.models import Incident, Notification
from tests.support.alerting import make_channel

pytestmark = pytest.mark.django_db

URL = reverse("incidents:list")


def make_incident(project, *, hours_ago: float, lasted: float | None = None, **kw):
    started = timezone.now() - timedelta(hours=hours_ago)
    return Incident.objects.create(
        project=project,
        started_at=started,
        confirmed_at=started + timedelta(minutes=1),
        resolved_at=None if lasted is None else started + timedelta(hours=lasted),
        first_error=kw.pop("first_error", "connection refused"),
        **kw,
    )


def rows(response) -> list[str]:
    html = response.content.decode()
    return re.findall(r'<tr class="incident-.*?</tr>', html, flags=re.S)


def test_it_needs_a_login(client):
    assert client.get(URL).status_code == 302


def test_open_incidents_come_first_then_the_most_recent(admin_client, make_project):
    shop, api = make_project(name="shop"), make_project(name="api")
    make_incident(shop, hours_ago=1, lasted=0.5)
    make_incident(api, hours_ago=30)
    make_incident(shop, hours_ago=5, lasted=2)

    response = admin_client.get(URL)

    shown = [(i.project.name, i.resolved_at is None) for i in response.context["page"]]
    assert shown == [("api", True), ("shop", False), ("shop", False)]
    first, second, _ = rows(response)
    assert "ongoing" in first
    assert "1 d 6 h" in first
    assert "30 min" in second


def test_it_filters_by_project(admin_client, make_project):
    shop, api = make_project(name="shop"), make_project(name="api")
    make_incident(shop, hours_ago=1)
    make_incident(api, hours_ago=2, lasted=1)

    response = admin_client.get(URL, {"project": api.pk})

    assert [i.project.name for i in response.context["page"]] == ["api"]
    assert "Incidents of api" in response.content.decode()
    assert admin_client.get(URL, {"project": 10**9}).status_code == 404


def test_it_shows_who_acknowledged_and_the_deliveries(
    admin_client, admin_user, make_project
):
    project = make_project()
    incident = make_incident(
        project, hours_ago=1, acknowledged_at=timezone.now(), acknowledged_by=admin_user
    )
    for number, state in enumerate(["delivered", "delivered", "pending"]):
        Notification.objects.create(
            key=f"k{number}",
            event="incident.opened",
            channel=make_channel(),
            project=project,
            incident=incident,
            state=state,
        )

    (row,) = rows(admin_client.get(URL))

    assert "admin" in row
    assert ">2 of 3</td>" in row
    assert "Acknowledge</button>" not in row


def test_an_open_unacknowledged_incident_has_a_button(admin_client, make_project):
    make_incident(make_project(), hours_ago=1)

    (row,) = rows(admin_client.get(URL))

    assert "Acknowledge</button>" in row


def test_a_page_costs_the_same_queries_for_2_or_40_incidents(
    admin_client, make_project
):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(URL).status_code == 200
        return len(captured)

    for hours in range(2):
        make_incident(make_project(), hours_ago=hours, lasted=0.1)
    few = queries()
    for hours in range(38):
        make_incident(make_project(), hours_ago=hours + 3)

    assert queries() == few
    # Session, user, poller heartbeat, monitor outage, page count, page,
    # notification channels (for the setup hints), the current team, the
    # user's teams (the header's switcher) and the page's escalations (their
    # steps and channels when there are some).
    assert few == 10
