"""What a status page says of a slow project (projects/status_pages/
states.py): "Degraded performance" on its line, in the banner and in the
page's badge, when nothing is down."""

from __future__ import annotations

import pytest

from django.core.cache import cache
from django.utils import timezone

from projects.models import Incident, Project
from projects.status_pages.states import page_state, project_state
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def state(**changes) -> str:
    facts = {
        "enabled": True,
        "state": "up",
        "in_maintenance": False,
        "manual_incident": False,
        "slow": False,
    }
    return project_state(**{**facts, **changes})


def test_a_slow_project_is_slow_unless_something_worse_is_said():
    assert state(slow=True) == "slow"
    assert state(slow=True, state="down") == "down"
    assert state(slow=True, manual_incident=True) == "degraded"
    assert state(slow=True, in_maintenance=True) == "maintenance"


def test_the_page_is_degraded_performance_only_when_nothing_is_down():
    assert page_state(["operational", "slow"]) == "slow"
    assert page_state(["down", "slow", "operational"]) == "partial"
    assert page_state(["degraded", "slow"]) == "partial"


def test_a_slow_project_shows_degraded_performance_on_the_page_and_banner(client):
    built = build_page(projects=3, sections=1, days=2, with_incident=False)
    Project.objects.filter(pk=built.down.pk).update(state=Project.State.UP)
    Project.objects.filter(pk=built.projects[0].pk).update(
        degraded_since=timezone.now()
    )
    # The writer opens an incident with each episode: the page's version moves.
    Incident.objects.create(
        project=built.projects[0],
        kind=Incident.Kind.DEGRADED,
        started_at=timezone.now(),
        confirmed_at=timezone.now(),
    )

    html = client.get("/status/acme/").content.decode()

    assert html.count("Degraded performance") >= 2  # the banner and the row
    assert "Partial outage" not in html
    badge = client.get("/status/acme/badge.svg").content.decode()
    assert "degraded performance" in badge
