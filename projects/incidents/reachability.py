"""Is it us? When most targets fail at once, the monitor's own network is
the likely cause.

More than half of the enabled projects, and at least
MIN_FAILING_PROJECTS, failing (their latest poll failed) opens a
MonitorOutage of kind "unreachable": one monitor.unreachable goes to the
default channels, and incident.opened notifications are held instead of
sent. When it clears, monitor.reachable goes out and the held ones are
released; those whose incident ended meanwhile were dropped when it ended.

The decision reads the projects' stored state inside the writer's
transaction, under a lock on PostgreSQL, so several writers agree on one
outage and one message.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from projects.incidents.machine import Change, Effect
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import MonitorOutage, Notification, Project
from projects.notifications import outbox

MIN_FAILING_PROJECTS = 5
# Openings queued this long before the outage is noticed are held too, if
# no deliverer has taken them yet: they are likely the outage's first signs.
HOLD_LOOKBACK = timedelta(minutes=1)
# pg_advisory_xact_lock key: one reachability decision at a time.
_LOCK_KEY = 0x4D4F4E49  # "MONI"

# A project is failing from its first failed poll to its next success,
# and failing_since is set for exactly that time (incidents/machine.py).
# Asked this way, with no parameter, SQLite uses the partial index
# project_failing too.
FAILING = Q(failing_since__isnull=False)

Kind = MonitorOutage.Kind
Event = Notification.Event


def worth_a_look(effects: Iterable[Effect]) -> bool:
    """Whether a batch could have changed the answer: a project began or
    stopped failing, or an incident opened."""
    return any(
        effect.started_failing
        or effect.stopped_failing
        or any(t.change is Change.OPENED for t in effect.transitions)
        for effect in effects
    )


def reconsider(*, at: datetime) -> bool:
    """Open or close the "unreachable" outage from the projects' stored
    state at `at`. Returns whether the monitor is cut off now."""
    _one_at_a_time()
    outage = MonitorOutage.objects.filter(kind=Kind.UNREACHABLE, ended_at=None).first()
    watched = _watched(at)
    cut_off = watched is not None and _mostly_failing(watched)
    if cut_off and outage is None:
        _begin(at, _counts(watched))
    elif outage is not None and not cut_off:
        _end(outage, at, _counts(watched))
    return cut_off


def is_cut_off(*, failing: int, enabled: int) -> bool:
    return failing >= MIN_FAILING_PROJECTS and failing * 2 > enabled


def _watched(at: datetime) -> QuerySet[Project] | None:
    """The enabled projects not under maintenance at `at`; None when a
    window covers them all."""
    projects = Project.objects.filter(enabled=True)
    covered = MaintenanceSchedule.load(at, at).covered_projects(at)
    if covered is None:
        return None
    if covered:
        projects = projects.exclude(pk__in=covered)
    return projects


def _mostly_failing(projects: QuerySet[Project]) -> bool:
    """is_cut_off() for these projects, without counting them all: the
    failing ones come from an index of them (project_failing), and the
    rest are counted only as far as the answer needs, twice as many."""
    failing = projects.filter(FAILING).count()
    if failing < MIN_FAILING_PROJECTS:
        return False
    return is_cut_off(
        failing=failing, enabled=projects.order_by()[: 2 * failing].count()
    )


def _counts(projects: QuerySet[Project] | None) -> dict[str, int]:
    """For the messages: every project counted."""
    if projects is None:
        return {"failing": 0, "enabled": 0}
    return projects.aggregate(failing=Count("pk", filter=FAILING), enabled=Count("pk"))


def _one_at_a_time() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
    # SQLite: the writer's transaction holds the database's write lock.


def _begin(at: datetime, counts: dict[str, int]) -> None:
    outage = MonitorOutage.objects.create(
        kind=Kind.UNREACHABLE, started_at=at, detail=counts
    )
    message = (
        f"Most projects are failing at once{outbox.TOTALS}: the monitor's own "
        "network is the likely cause. Down notifications are held until it "
        "clears."
    )
    totals = f" ({counts['failing']} of {counts['enabled']} projects)"
    outbox.queue_monitor_event(
        Event.MONITOR_UNREACHABLE, outage, at, message, totals=totals
    )
    outbox.hold_unsent_openings(since=timezone.now() - HOLD_LOOKBACK)


def _end(outage: MonitorOutage, at: datetime, counts: dict[str, int]) -> None:
    outage.ended_at = at
    outage.detail = {**outage.detail, "failing_at_end": counts["failing"]}
    outage.save(update_fields=["ended_at", "detail"])
    message = (
        f"The monitor reaches its targets again{outbox.TOTALS}. Held down "
        "notifications of projects still down are sent now."
    )
    totals = f" ({counts['failing']} of {counts['enabled']} projects failing)"
    outbox.queue_monitor_event(
        Event.MONITOR_REACHABLE, outage, at, message, totals=totals
    )
    outbox.release_held()
