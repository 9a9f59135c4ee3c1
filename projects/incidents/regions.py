"""The result writer's region step: a project is down when enough of the
regions polling it agree (docs/regions.md).

It replaces the project-state step (states.save_states) when more than
one region has live pollers, in the same transaction and on the same
locked project rows. Each region's polls run through the decision table
(machine.py) with the project's thresholds, kept per (project, region) in
ProjectRegionState; then the project is down when at least its quorum of
the regions that count are confirmed failing, and up again when fewer
are. What that changes is handed to the incident step as the usual
Effect, so incidents and notifications stay exactly-once: the project
rows are locked in id order by every writer, whatever its region.

Regions that count: those polling the project (Project.regions, or every
live region when it has none) that have a live poller and are not blind
(most of the projects they poll failing at once: the "is it us?" rule,
per region).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from projects.batch_writes import datetime_adapter, quote, update_rows, upsert_rows
from projects.incidents.machine import (
    DOWN,
    PENDING,
    SETTLED,
    UP,
    Change,
    Effect,
    Poll,
    Streak,
    Thresholds,
    Transition,
    run,
)
from projects.incidents.region_outages import reconsider_blindness
from projects.incidents.states import (
    STATE_FIELDS,
    Stored,
    _aware,
    _state_row,
    save_states,
)
from projects.models import Project, ProjectRegionState, Region
from projects.units import SECONDS_PER_UNIT

MAX_REASON_LENGTH = 1000


@dataclass(frozen=True, slots=True)
class RegionView:
    """The regions as the writer sees them for one batch."""

    region_id: int  # the writer's own: the polls are of it
    live: frozenset[int]  # with a live poller, the writer's own included
    blind: frozenset[int]  # most of their projects failing at once
    names: dict[int, str]
    silent: timedelta  # how long a region may go unseen and be live

    def reread(self) -> RegionView:
        """The same view read again, in the writer's transaction: writers
        of several regions must agree on which count."""
        return region_view(self.region_id, silent=self.silent)

    def with_blindness(self, blind: bool) -> RegionView:
        """This view, with the writer's own region blind or not."""
        blinded = (
            self.blind | {self.region_id} if blind else self.blind - {self.region_id}
        )
        return replace(self, blind=frozenset(blinded))

    def counted(self, polling: Iterable[int] | None) -> list[int]:
        """Of the regions polling a project (None: every live one), those
        whose view counts, in name order."""
        regions = self.live if polling is None else self.live & set(polling)
        return sorted(
            (r for r in regions if r not in self.blind), key=lambda r: self.names[r]
        )


def quorum_needed(quorum: int | None, counted: int) -> int:
    """How many of `counted` regions must be confirmed failing: the
    project's quorum (a majority when None), at most all of them; 0 when
    none counts (never down)."""
    if counted == 0:
        return 0
    return min(counted // 2 + 1 if quorum is None else quorum, counted)


def describe(reasons: Sequence[tuple[str, str]]) -> str:
    """ "eu: connection refused; us: expected 200, got 503"."""
    text = "; ".join(f"{name}: {reason or 'failed'}" for name, reason in reasons)
    return text[:MAX_REASON_LENGTH]


def save_region_states(
    cursor,
    polls: Sequence[Poll],
    stored: dict[int, Stored],
    view: RegionView,
    *,
    in_maintenance: Callable[[Poll], bool],
) -> dict[int, Effect]:
    """The region's view of each project from its polls, then each
    project's state from every counted region's. Returns what the polls
    did to each project."""
    view = view.reread()
    by_project: dict[int, list[Poll]] = defaultdict(list)
    for poll in sorted(polls, key=lambda p: p.at):
        by_project[poll.project_id].append(poll)
    project_table = quote(Project._meta.db_table)
    settings = {
        pk: (quorum, kind, interval * SECONDS_PER_UNIT[unit])
        for pk, quorum, kind, interval, unit in _rows_of(
            cursor,
            f"SELECT id, quorum, kind, interval, interval_unit FROM {project_table}",
            "id",
            by_project,
        )
    }
    # Heartbeat projects are told by their pings, not from a place: each
    # decides alone, as with one region.
    beats = [p for p in polls if settings[p.project_id][1] == Project.Kind.HEARTBEAT]
    effects = {}
    if beats:
        effects = save_states(cursor, beats, stored, in_maintenance=in_maintenance)
        for project_id in effects:
            del by_project[project_id]
    ids = sorted(by_project)
    polling: dict[int, list[int]] = defaultdict(list)
    through = Project.regions.through.objects.filter(project_id__in=ids)
    for project_id, region_id in through.values_list("project_id", "region_id"):
        polling[project_id].append(region_id)
    streaks, polled_at = _region_streaks(cursor, ids)
    mine: dict[int, tuple[Streak, list[Poll]]] = {}
    region_effects: list[Effect] = []
    for project_id, project_polls in by_project.items():
        thresholds: Thresholds = stored[project_id][1]
        before, reason = streaks.get((project_id, view.region_id), (Streak(), ""))
        effect = run(before, project_polls, thresholds, in_maintenance=in_maintenance)
        region_effects.append(effect)
        failed = [p for p in project_polls if not p.up]
        if failed:
            reason = failed[-1].error
        elif effect.after.state == UP:
            reason = ""
        streaks[project_id, view.region_id] = (effect.after, reason)
        mine[project_id] = (effect.after, project_polls)
    _save_region_rows(cursor, view.region_id, mine, streaks)
    if any(e.started_failing or e.stopped_failing for e in region_effects):
        # The "is it us?" rule, for this region alone.
        was_blind = view.region_id in view.blind
        blind = reconsider_blindness(view.region_id, at=max(p.at for p in polls))
        view = view.with_blindness(blind)
        if was_blind and not blind:
            # What it confirmed while blind is not trusted: its projects
            # still failing confirm again (reconsider_blindness stored the
            # same).
            for key, (streak, reason) in streaks.items():
                if key[1] == view.region_id and streak.state == DOWN:
                    streaks[key] = (Streak(PENDING), reason)
    effects |= {
        project_id: _decide(
            project_id,
            stored[project_id][0],
            mine[project_id][1],
            view,
            view.counted(polling.get(project_id)),
            settings[project_id][0],
            streaks,
            _fresh_since(mine[project_id][1], settings[project_id][2]),
            polled_at,
            in_maintenance,
        )
        for project_id in ids
    }
    adapt = datetime_adapter()
    rows = [_state_row(by_project[pid], effects[pid].after, adapt) for pid in ids]
    update_rows(
        cursor,
        Project,
        STATE_FIELDS,
        rows,
        expressions={"tls_expires_at": "COALESCE({new}, {old})"},
    )
    return effects


def _region_streaks(
    cursor, ids: list[int]
) -> tuple[dict[tuple[int, int], tuple[Streak, str]], dict[tuple[int, int], datetime]]:
    """Every region's streak of the projects, and when it last polled each,
    read through the writer's cursor: the ORM's rows cost several times
    the rest of the step."""
    table = quote(ProjectRegionState._meta.db_table)
    rows = _rows_of(
        cursor,
        "SELECT project_id, region_id, state, consecutive_failures, "
        f"consecutive_successes, failing_since, last_error, last_polled_at "
        f"FROM {table}",
        "project_id",
        ids,
        # Settled views (most) are not read: a region with no row read is
        # up with nothing to remember, as a settled one is.
        also=f"NOT ({table}.state = '{UP}' AND consecutive_failures = 0 "
        "AND consecutive_successes = 0 AND failing_since IS NULL)",
    )
    streaks, polled_at = {}, {}
    for project_id, region_id, state, failures, successes, since, reason, at in rows:
        streak = Streak(state, failures, successes, _aware(since))
        streaks[project_id, region_id] = (streak, reason)
        polled_at[project_id, region_id] = _aware(at)
    return streaks, polled_at


def _rows_of(
    cursor, select: str, column: str, ids: Iterable[int], *, also: str = ""
) -> list[tuple]:
    """`select` of the rows whose `column` is one of `ids` (and for which
    the SQL `also` holds, if given)."""
    ids = list(ids)
    if not ids:
        return []
    also = f" AND {also}" if also else ""
    if connection.vendor == "postgresql":
        cursor.execute(f"{select} WHERE {column} = ANY(%s){also}", [ids])
    else:
        marks = ", ".join(["%s"] * len(ids))
        cursor.execute(f"{select} WHERE {column} IN ({marks}){also}", ids)
    return cursor.fetchall()


REGION_FIELDS = (
    "project",
    "region",
    "state",
    "consecutive_failures",
    "consecutive_successes",
    "failing_since",
    "last_polled_at",
    "last_up",
    "last_status_code",
    "last_response_time_ms",
    "last_error",
)
_REPLACED = dict.fromkeys(REGION_FIELDS[2:], "{new}")


def _save_region_rows(
    cursor,
    region_id: int,
    mine: dict[int, tuple[Streak, list[Poll]]],
    streaks: dict[tuple[int, int], tuple[Streak, str]],
) -> None:
    adapt = datetime_adapter()
    rows = []
    for project_id in sorted(mine):
        streak, polls = mine[project_id]
        last = polls[-1]
        rows.append(
            (
                project_id,
                region_id,
                streak.state,
                streak.failures,
                streak.successes,
                adapt(streak.failing_since),
                adapt(last.at),
                last.up,
                last.status_code,
                last.response_time_ms,
                streaks[project_id, region_id][1][:MAX_REASON_LENGTH],
            )
        )
    upsert_rows(
        cursor,
        ProjectRegionState,
        REGION_FIELDS,
        rows,
        conflict=("project", "region"),
        updates=_REPLACED,
    )


_UNSEEN = (Streak(), "")
# A region's failing view of a project counts while it polled it within
# this many of its intervals (and a minute) before the batch's poll.
FRESH_INTERVALS = 3


def _settled(streak: Streak) -> bool:
    """Up with nothing to remember, or never seen failing."""
    return streak == SETTLED or streak == _UNSEEN[0]


def _fresh_since(polls: list[Poll], interval_seconds: int) -> datetime:
    return polls[-1].at - timedelta(seconds=FRESH_INTERVALS * interval_seconds + 60)


def _decide(
    project_id: int,
    before: Streak,
    polls: list[Poll],
    view: RegionView,
    counted: list[int],
    quorum: int | None,
    streaks: dict[tuple[int, int], tuple[Streak, str]],
    fresh_since: datetime,
    polled_at: dict[tuple[int, int], datetime],
    in_maintenance: Callable[[Poll], bool],
) -> Effect:
    """The project's new streak from its counted regions' streaks, and the
    transitions for the incident step. A region's failing view older than
    `fresh_since` (a poller of it gone and back, say) counts as not failing
    until it polls again."""
    views = {}
    for r in counted:
        seen = streaks.get((project_id, r), _UNSEEN)
        at = polled_at.get((project_id, r))
        stale = r != view.region_id and at is not None and at < fresh_since
        views[r] = _UNSEEN if stale else seen
    if before == SETTLED and all(_settled(v[0]) for v in views.values()):
        return Effect(before=before, after=SETTLED)  # most projects, most polls
    confirmed = [r for r in counted if views[r][0].state == DOWN]
    failing = [r for r in counted if views[r][0].failing]
    needed = quorum_needed(quorum, len(counted))
    down = needed > 0 and len(confirmed) >= needed
    since = min(
        (views[r][0].failing_since for r in failing if views[r][0].failing_since),
        default=None,
    )
    reason = describe([(view.names[r], views[r][1]) for r in confirmed])
    last = polls[-1]
    if down:
        after = Streak(DOWN, max(views[r][0].failures for r in confirmed), 0, since)
    elif failing:
        after = Streak(PENDING, max(views[r][0].failures for r in failing), 0, since)
    else:
        after = SETTLED
    transitions: list[Transition] = []
    counting = [p for p in polls if not in_maintenance(p)]
    if down and before.state != DOWN:
        poll = last._replace(up=False, error=reason)
        transitions.append(Transition(Change.OPENED, poll, after, described=True))
    elif down:
        for poll in counting:
            if not poll.up and view.region_id in confirmed:
                failed = poll._replace(error=reason)
                transitions.append(
                    Transition(Change.FAILED, failed, after, described=True)
                )
    elif before.state == DOWN:
        transitions.append(Transition(Change.RESOLVED, last, after))
    return Effect(
        before=before,
        after=after,
        transitions=transitions,
        started_failing=not before.failing_since and since is not None,
        stopped_failing=before.failing_since is not None and since is None,
    )


def region_view(region_id: int, *, silent: timedelta) -> RegionView:
    """The regions now, a region being live while a poller of it has been
    seen within `silent`: one small query."""
    live_since = timezone.now() - silent
    live, blind, names = set(), set(), {}
    rows = Region.objects.values_list("pk", "name", "last_seen_at", "blind_since")
    for pk, name, seen, blind_since in rows:
        names[pk] = name
        if seen is not None and seen >= live_since:
            live.add(pk)
        if blind_since is not None:
            blind.add(pk)
    live.add(region_id)
    return RegionView(region_id, frozenset(live), frozenset(blind), names, silent)


def as_verdicts(polls: Sequence[Poll], effects: dict[int, Effect]) -> list[Poll]:
    """The polls as the rollups count them: failed while the project is
    down (its quorum agreed), up otherwise, whatever one region saw; so
    uptime counts a window down only when the project was."""
    return [
        poll._replace(up=effects[poll.project_id].after.state != DOWN) for poll in polls
    ]
