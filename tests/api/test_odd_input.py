"""Odd query values are a 400 naming the parameter, an odd cursor a 404:
never a 500 (security review S4-08)."""

from __future__ import annotations

from base64 import b64encode

import pytest

from django.utils import timezone

HUGE = "99999999999999999999"
EARLIEST_EAST = "0001-01-01T00:00:00+14:00"  # before year 1 in UTC
LATEST_WEST = "9999-12-31T23:59:59-14:00"  # after year 9999 in UTC


def cursor(position: str) -> str:
    return b64encode(f"p={position}".encode()).decode()


@pytest.mark.parametrize("value", ["²", "٣", HUGE, "-1", "1.0"])
def test_an_odd_project_filter_on_incidents_is_a_400(read_api, value):
    response = read_api.get("/api/v1/incidents/", {"project": value})

    assert response.status_code == 400
    assert list(response.json()) == ["project"]


def test_a_project_filter_on_incidents_still_filters(read_api, make_project):
    project = make_project()

    response = read_api.get("/api/v1/incidents/", {"project": str(project.pk)})

    assert response.status_code == 200
    assert response.json()["results"] == []


@pytest.mark.parametrize("name", ["since", "until"])
@pytest.mark.parametrize("value", [EARLIEST_EAST, LATEST_WEST])
def test_a_moment_out_of_range_in_utc_is_a_400(read_api, make_project, name, value):
    project = make_project()

    response = read_api.get(f"/api/v1/projects/{project.pk}/results/", {name: value})

    assert response.status_code == 400
    assert list(response.json()) == [name]


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_the_first_and_last_moments_in_utc_are_fine(read_api, make_project, value):
    project = make_project()

    response = read_api.get(f"/api/v1/projects/{project.pk}/results/", {"since": value})

    assert response.status_code == 200


@pytest.mark.parametrize(
    "position", ["notadate", EARLIEST_EAST, LATEST_WEST, "2026-13-01 00:00:00"]
)
def test_a_crafted_cursor_position_is_a_404(read_api, make_project, position):
    project = make_project()

    response = read_api.get(
        f"/api/v1/projects/{project.pk}/results/", {"cursor": cursor(position)}
    )

    assert response.status_code == 404
    assert "cursor" in response.json()["detail"].lower()


def test_a_cursor_the_api_made_still_pages(read_api, make_project, add_polls):
    project = make_project()
    add_polls(project, "uud", end=timezone.now())
    url = f"/api/v1/projects/{project.pk}/results/"

    first = read_api.get(url, {"page_size": 2}).json()
    second = read_api.get(first["next"])

    assert second.status_code == 200
    assert len(second.json()["results"]) == 1
