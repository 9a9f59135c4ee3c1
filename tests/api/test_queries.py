"""Every list costs the same number of queries for a page of 5 or of 50."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from projects.models import (
    AuditEntry,
    Incident,
    MaintenanceWindow,
    NotificationChannel,
    Project,
    Region,
    Tag,
)

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


# A create reads the key, the tags and regions it names (by name), the
# default channels (the initial value of its channels), then the form
# checks the tags, channels and regions named and the name's uniqueness
# (not the team: the key's, already read); it inserts the project, each
# many-to-many field's rows and the audit entry, in one transaction (here
# a savepoint and its release); the answer reads the maintenance windows
# (for the state shown).
CREATE_QUERIES = 16
# TEST-NET-3, never polled here: a URL in POLL_BLOCKED_NETWORKS (loopback)
# costs one query more, to ask whether the team is trusted.
PUBLIC_URL = "http://203.0.113.9:9/"


@pytest.mark.parametrize("named", [1, 3])
def test_a_create_costs_a_fixed_few_queries_whatever_it_names(write_api, named):
    tags = [Tag.objects.create(name=f"t{n}") for n in range(3)]
    channels = [
        NotificationChannel.objects.create(
            name=f"c{n}", kind="email", url="a@b.org", is_default=n == 0
        )
        for n in range(3)
    ]
    regions = [Region.objects.create(name=f"r{n}") for n in range(3)]
    body = {
        "name": "new",
        "url": PUBLIC_URL,
        "tags": [tag.name for tag in tags[:named]],
        "channels": [channel.pk for channel in channels[:named]],
        "regions": [region.name for region in regions[:named]],
    }
    write_api.get("/api/v1/tags/")  # the key's first use writes last_used_at

    with CaptureQueriesContext(connection) as captured:
        response = write_api.post("/api/v1/projects/", body, format="json")

    assert response.status_code == 201, response.json()
    assert len(captured) == CREATE_QUERIES, [q["sql"] for q in captured]
    project = Project.objects.get(name="new")
    assert sorted(project.channels.values_list("pk", flat=True)) == body["channels"]
    assert AuditEntry.objects.get(object_id=str(project.pk)).changes


def test_a_create_left_without_channels_costs_no_more(write_api):
    NotificationChannel.objects.create(
        name="all", kind="email", url="a@b.org", is_default=True
    )
    write_api.get("/api/v1/tags/")

    with CaptureQueriesContext(connection) as captured:
        response = write_api.post(
            "/api/v1/projects/",
            {"name": "new", "url": PUBLIC_URL},
            format="json",
        )

    assert response.status_code == 201, response.json()
    # No tags or regions named: neither read by name, checked nor inserted.
    assert len(captured) == CREATE_QUERIES - 6, [q["sql"] for q in captured]
    assert response.json()["channels"] == list(
        NotificationChannel.objects.values_list("pk", flat=True)
    )
