"""The project list: each project's state, counts per state, search.

The poller keeps each project's current state on the Project row, so none
of this touches poll results; it reads at most a few thousand small rows.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Case, Count, F, Q, QuerySet, Value, When

from projects.models import Project, Status


class State(models.TextChoices):
    DOWN = "down", "Down"
    UP = "up", "Up"
    WAITING = "waiting", "Waiting"  # enabled, not polled yet
    PAUSED = "paused", "Paused"


def with_state(projects: QuerySet[Project]) -> QuerySet[Project]:
    """Annotate `state`, one of State's values."""
    return projects.annotate(
        state=Case(
            When(enabled=False, then=Value(State.PAUSED)),
            When(last_status="", then=Value(State.WAITING)),
            default=F("last_status"),
        )
    )


def state_counts() -> dict[str, int]:
    """How many projects are in each state, zeros included."""
    rows = (
        with_state(Project.objects.all())
        .values("state")
        .annotate(count=Count("id"))
        .order_by()
    )
    counts = dict.fromkeys(State.values, 0)
    counts.update((row["state"], row["count"]) for row in rows)
    return counts


def project_list(*, search: str = "", state: str = "") -> QuerySet[Project]:
    """Projects matching a search on name or URL, down ones first."""
    projects = with_state(Project.objects.all())
    if search:
        projects = projects.filter(Q(name__icontains=search) | Q(url__icontains=search))
    if state in State.values:
        projects = projects.filter(state=state)
    down_first = Case(When(state=Status.DOWN, then=Value(0)), default=Value(1))
    return projects.order_by(down_first, "name")
