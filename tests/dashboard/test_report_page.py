"""The report page: the API's report for a project, tag or team over a
range of days, laid out to print, with links to its CSV and JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.urls import reverse

from projects.models import Incident, Tag

pytestmark = pytest.mark.django_db


def test_a_projects_report_shows_its_numbers_and_incidents(
    admin_client, make_project, add_polls
):
    project = make_project(name="shop")
    end = datetime(2026, 10, 10, 12, tzinfo=UTC)
    add_polls(project, "uuuuuuuudd", end=end)
    Incident.objects.create(
        project=project,
        started_at=end - timedelta(minutes=1),
        confirmed_at=end,
        resolved_at=end + timedelta(minutes=4),
    )

    response = admin_client.get(
        reverse("dashboard:report"),
        {"project": project.pk, "start": "2026-10-01", "end": "2026-11-01"},
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "Report: shop" in html
    assert "80.000 %" in html
    assert "2 of 10 polls failed" in html
    assert "300 s" in html  # the incident's time, and the MTTR
    assert "format=csv" in html


def test_a_tags_report_and_an_unknown_tag(admin_client, make_project):
    tag = Tag.objects.create(name="web")
    make_project().tags.add(tag)

    assert (
        "tag web"
        in admin_client.get(
            reverse("dashboard:report"), {"tag": "web"}
        ).content.decode()
    )
    response = admin_client.get(reverse("dashboard:report"), {"tag": "nope"})
    assert response.status_code == 404
