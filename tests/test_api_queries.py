"""Every list costs the same number of queries for a page of 5 or of 50."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from projects.models import Incident, MaintenanceWindow, NotificationChannel, Tag

PAGE_SIZES = (5, 50)


def queries_for(client, url: str) -> int:
    client.get(url)  # the key's first use of the minute also writes last_used_at
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(captured)


@pytest.fixture
def many(make_project, add_polls):
    """60 projects with tags, channels, incidents, windows and polls."""
    tags = [Tag.objects.create(name=f"t{n}") for n in range(3)]
    channels = [
        NotificationChannel.objects.create(name=f"c{n}", kind="email", url="a@b.org")
        for n in range(3)
    ]
    now = timezone.now()
    projects = []
    for number in range(60):
        project = make_project()
        project.tags.set(tags)
        project.channels.set(channels)
        Incident.objects.create(project=project, started_at=now, confirmed_at=now)
        window = MaintenanceWindow.objects.create(
            name=f"w{number}",
            starts_at=now - timedelta(hours=1),
            ends_at=now + timedelta(hours=1),
        )
        window.projects.add(project)
        projects.append(project)
    add_polls(projects[0], "ud" * 30, end=now)
    return projects


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/projects/",
        "/api/v1/incidents/",
        "/api/v1/channels/",
        "/api/v1/maintenance-windows/",
        "/api/v1/tags/",
    ],
)
def test_a_list_page_costs_the_same_queries_whatever_its_size(read_api, many, path):
    counts = [queries_for(read_api, f"{path}?page_size={size}") for size in PAGE_SIZES]

    assert counts[0] == counts[1]


def test_a_results_page_costs_the_same_queries_whatever_its_size(read_api, many):
    path = f"/api/v1/projects/{many[0].pk}/results/"
    counts = [queries_for(read_api, f"{path}?page_size={size}") for size in PAGE_SIZES]

    assert counts[0] == counts[1]
