"""A flow's page: the latest poll's steps as a waterfall, the latest
failure with its step's response excerpt (secrets masked)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.urls import reverse

from polling.engine.types import Outcome, StepRun
from polling.store import DatabaseResultStore
from projects.dashboard.queries.flow_steps import WIDTH, waterfall
from projects.models import Project
from tests.support.flows import contract_steps, shop_secret

pytestmark = pytest.mark.django_db

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def checkout():
    shop_secret()
    project = Project(
        name="checkout works", kind=Project.Kind.FLOW, failure_threshold=1
    )
    project.steps_to_save = contract_steps()
    project.full_clean()
    project.save()
    return project


def store(project: Project, at: datetime, *runs: StepRun) -> None:
    failed = next((run for run in runs if not run.up), None)
    DatabaseResultStore().save(
        [
            Outcome(
                project_id=project.pk,
                up=failed is None,
                started_at=at,
                due_at=at,
                status_code=runs[-1].status_code,
                response_time_ms=sum(run.response_time_ms or 0 for run in runs),
                error=failed.error if failed else "",
                steps=runs,
            )
        ]
    )


def test_the_waterfall_starts_each_bar_where_the_one_before_ended():
    bars = waterfall(
        [{"name": "a", "up": True, "ms": 30}, {"name": "b", "up": True, "ms": 10}]
    )
    assert [(b.x, b.width) for b in bars] == [
        (0, WIDTH * 3 // 4),
        (WIDTH * 3 // 4, 250),
    ]


def test_the_page_shows_the_steps_and_the_latest_failure(admin_client, checkout):
    failed = "step 2 'my orders': expected 200-299, got 401"
    store(
        checkout,
        NOW - timedelta(minutes=10),
        StepRun("log in", True, 200, 40, dns_ms=1, connect_ms=2),
        StepRun(
            "my orders", False, 401, 5, error=failed, excerpt='{"error": "expired"}'
        ),
    )
    store(
        checkout,
        NOW,
        StepRun("log in", True, 200, 30),
        StepRun("my orders", True, 200, 10),
    )

    page = admin_client.get(reverse("dashboard:project", args=[checkout.pk]))

    html = page.content.decode()
    assert "1. log in" in html
    assert "2. my orders" in html
    assert 'x="750" y="0" width="250"' in html
    assert failed.replace("'", "&#x27;") in html
    assert "{&quot;error&quot;: &quot;expired&quot;}" in html
    assert "checkout works: step 2 &#x27;my orders&#x27; failed" in html
