"""The project list: each project's state, counts per state, search.

The poller keeps each project's current state on the Project row, so none
of this touches poll results; it reads at most a few thousand small rows.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db import models
from django.db.models import Case, Count, F, Q, QuerySet, Value, When

from projects.models import Project, Team
from projects.teams.scoping import for_team


class State(models.TextChoices):
    """What the pages show: the project's state as its thresholds decide,
    unless it is paused, under maintenance or not polled yet."""

    DOWN = "down", "Down"
    PENDING = "pending", "Pending"  # failing, not yet confirmed
    DEGRADED = "degraded", "Degraded"  # up, but slower than its limit
    UP = "up", "Up"
    MAINTENANCE = "maintenance", "Maintenance"
    WAITING = "waiting", "Waiting"  # enabled, not polled yet
    PAUSED = "paused", "Paused"


# Projects under maintenance, or None for all of them.
Maintained = Collection[int] | None


def with_state(
    projects: QuerySet[Project], *, maintained: Maintained = ()
) -> QuerySet[Project]:
    """Annotate `display_state`, one of State's values."""
    whens = [When(enabled=False, then=Value(State.PAUSED))]
    if maintained is None:
        whens.append(When(enabled=True, then=Value(State.MAINTENANCE)))
    elif maintained:
        whens.append(When(pk__in=list(maintained), then=Value(State.MAINTENANCE)))
    whens.append(When(state="", then=Value(State.WAITING)))
    whens.append(
        When(state=State.UP, degraded_since__isnull=False, then=Value(State.DEGRADED))
    )
    return projects.annotate(display_state=Case(*whens, default=F("state")))


def display_state_of(project: Project, *, maintained: Maintained = ()) -> str:
    """with_state's display_state of a project in hand, with no query."""
    if not project.enabled:
        return State.PAUSED
    if maintained is None or project.pk in maintained:
        return State.MAINTENANCE
    if project.state == State.UP and project.degraded_since is not None:
        return State.DEGRADED
    return project.state or State.WAITING


def state_counts(
    *, team: Team | None, maintained: Maintained = (), tag: str = ""
) -> dict[str, int]:
    """How many of the team's projects (carrying `tag`, when given) are in
    each state, zeros included."""
    projects = for_team(Project.objects.all(), team)
    if tag:
        projects = projects.filter(tags__name=tag)
    rows = (
        with_state(projects, maintained=maintained)
        .values("display_state")
        .annotate(count=Count("id"))
        .order_by()
    )
    counts = dict.fromkeys(State.values, 0)
    counts.update((row["display_state"], row["count"]) for row in rows)
    return counts


def project_list(
    *,
    team: Team | None,
    search: str = "",
    state: str = "",
    tag: str = "",
    maintained: Maintained = (),
) -> QuerySet[Project]:
    """The team's projects matching a search on name or URL (and carrying `tag`, when
    given), down ones first, then pending ones; their tags come in one
    more query for the whole page."""
    projects = with_state(for_team(Project.objects.all(), team), maintained=maintained)
    projects = projects.prefetch_related("tags")
    if tag:
        projects = projects.filter(tags__name=tag)
    if search:
        projects = projects.filter(Q(name__icontains=search) | Q(url__icontains=search))
    if state in State.values:
        projects = projects.filter(display_state=state)
    worst_first = Case(
        When(display_state=State.DOWN, then=Value(0)),
        When(display_state=State.PENDING, then=Value(1)),
        When(display_state=State.DEGRADED, then=Value(2)),
        default=Value(3),
    )
    return projects.order_by(worst_first, "name")
