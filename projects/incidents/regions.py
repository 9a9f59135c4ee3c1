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

It costs the writer one statement of its own in the common batch: the
regions' unsettled views of the locked projects are read at once
(region_rows.py),
the decision is made in Python, and the region's views go into the
writer's pipeline with the polls, the project states and the rollups.
Only a batch in which a project starts or stops failing from the region
reads again (is the region blind?) and so leaves the pipeline.

Regions that count: those polling the project (Project.regions, or every
live region when it has none) that have a live poller and are not blind
(most of the projects they poll failing at once: the "is it us?" rule,
per region).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from projects.incidents.batch_writes import (
    datetime_adapter,
    pipeline,
    quote,
    update_rows,
)
from projects.incidents.machine import (
    DOWN,
    PENDING,
    SETTLED,
    UP,
    Change,
    Effect,
    Poll,
    Streak,
    Transition,
    run,
)
from projects.incidents.region_outages import reconsider_blindness
from projects.incidents.region_rows import (
    MAX_REASON_LENGTH,
    Facts,
    save_views,
)
from projects.incidents.states import (
    STATE_FIELDS,
    Stored,
    aware,
    save_states,
    state_row,
)
from projects.models import Project, Region


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
    facts: dict[int, Facts],
    view: RegionView,
    *,
    in_maintenance: Callable[[Poll], bool],
    write: Callable[[dict[int, Effect]], None],
) -> dict[int, Effect]:
    """The region's view of each project from its polls, then each
    project's state from every counted region's. `stored` and `facts` are
    what lock_with_facts() read; `write(effects)` makes the batch's other
    writes (the polls, the rollups), in the same pipeline when nothing is
    read back. Returns what the polls did to each project."""
    view = view.reread()
    by_project: dict[int, list[Poll]] = defaultdict(list)
    beats: list[Poll] = []
    for poll in sorted(polls, key=lambda p: p.at):
        # Heartbeat projects are told by their pings, not from a place:
        # each decides alone, as with one region.
        if facts[poll.project_id].heartbeat:
            beats.append(poll)
        else:
            by_project[poll.project_id].append(poll)
    quiet, others = _quiet(by_project, stored, facts, polls)
    mine, turned = _own_views(others, stored, facts, view, in_maintenance)
    # A quiet project's view is written again only when its row is old.
    changed = {
        project_id: (SETTLED, "", by_project[project_id])
        for project_id in quiet
        if not facts[project_id].recent
    }
    changed.update(
        (project_id, own)
        for project_id, own in mine.items()
        if not _unchanged(own[0], view.region_id, facts[project_id])
    )
    if turned:
        # A project started or stopped failing from this region: whether
        # the region is blind is counted from its stored views, so they go
        # in first, and nothing is pipelined.
        save_views(cursor, view.region_id, changed)
        view = _reconsider(view, mine, polls)
    effects = quiet  # and the others', decided here
    for project_id, project_polls in others.items():
        effects[project_id] = _decide(
            stored[project_id][0],
            project_polls,
            view,
            facts[project_id],
            mine[project_id],
            in_maintenance,
        )
    with pipeline(cursor):
        if not turned:
            save_views(cursor, view.region_id, changed)
        if beats:
            effects |= save_states(cursor, beats, stored, in_maintenance=in_maintenance)
        _save_project_states(cursor, by_project, effects)
        write(effects)
    return effects


# What the polls did to a quiet project: nothing. One shared Effect, its
# transitions a tuple that nothing can add to: a batch makes none for
# most of its projects.
_NOTHING = Effect(before=SETTLED, after=SETTLED, transitions=())


def _quiet(
    by_project: dict[int, list[Poll]],
    stored: dict[int, Stored],
    facts: dict[int, Facts],
    polls: Sequence[Poll],
) -> tuple[dict[int, Effect], dict[int, list[Poll]]]:
    """Most projects, most polls: the project is up, every region's view
    of it is settled (it has no unsettled view) and the region's polls of
    it are all up. Its own view stays settled and the project up, whoever
    counts; nothing is decided. Returns those projects' effects, and the
    other projects' polls."""
    failed = {poll.project_id for poll in polls if not poll.up}
    quiet, others = {}, {}
    for project_id, project_polls in by_project.items():
        if (
            stored[project_id][0] is SETTLED
            and not facts[project_id].views
            and project_id not in failed
        ):
            quiet[project_id] = _NOTHING
        else:
            others[project_id] = project_polls
    return quiet, others


def _unchanged(after: Streak, region_id: int, facts: Facts) -> bool:
    """Whether the region's row of the project may stay as it is: its view
    was and is settled, and the row is recent (region_rows.py)."""
    return facts.recent and after is SETTLED and region_id not in facts.views


def _own_views(
    by_project: dict[int, list[Poll]],
    stored: dict[int, Stored],
    facts: dict[int, Facts],
    view: RegionView,
    in_maintenance: Callable[[Poll], bool],
) -> tuple[dict[int, tuple[Streak, str, list[Poll]]], bool]:
    """The region's new view of each project (streak, reason, polls), and
    whether any project started or stopped failing from it."""
    mine, turned = {}, False
    for project_id, project_polls in by_project.items():
        own = facts[project_id].views.get(view.region_id)
        if own is None and all(p.up for p in project_polls):
            mine[project_id] = (SETTLED, "", project_polls)  # most projects
            continue
        before, reason = (SETTLED, "") if own is None else own[:2]
        effect = run(
            before, project_polls, stored[project_id][1], in_maintenance=in_maintenance
        )
        turned |= effect.started_failing or effect.stopped_failing
        failed = [p for p in project_polls if not p.up]
        if failed:
            reason = failed[-1].error
        elif effect.after.state == UP:
            reason = ""
        mine[project_id] = (effect.after, reason, project_polls)
    return mine, turned


def _reconsider(
    view: RegionView, mine: dict[int, tuple[Streak, str, list[Poll]]], polls
) -> RegionView:
    """The "is it us?" rule, for this region alone: the view with the
    region blind or not."""
    was_blind = view.region_id in view.blind
    blind = reconsider_blindness(view.region_id, at=max(p.at for p in polls))
    if was_blind and not blind:
        # What it confirmed while blind is not trusted: its projects still
        # failing confirm again (reconsider_blindness stored the same).
        for project_id, (streak, reason, project_polls) in mine.items():
            if streak.state == DOWN:
                mine[project_id] = (Streak(PENDING), reason, project_polls)
    return view.with_blindness(blind)


def _save_project_states(
    cursor, by_project: dict[int, list[Poll]], effects: dict[int, Effect]
) -> None:
    adapt = datetime_adapter()
    rows = [
        state_row(project_polls, effects[project_id].after, adapt)
        for project_id, project_polls in by_project.items()
    ]
    update_rows(
        cursor,
        Project,
        STATE_FIELDS,
        rows,
        expressions={"tls_expires_at": "COALESCE({new}, {old})"},
    )


_UNSEEN = (Streak(), "")
# A region's failing view of a project counts while it polled it within
# this many of its intervals (and a minute) before the batch's poll.
FRESH_INTERVALS = 3


def _settled(streak: Streak) -> bool:
    """Up with nothing to remember, or never seen failing."""
    return streak == SETTLED or streak == _UNSEEN[0]


def _counted_views(
    polls: list[Poll],
    view: RegionView,
    facts: Facts,
    own: tuple[Streak, str, list[Poll]],
) -> dict[int, tuple[Streak, str]]:
    """Each counted region's view of the project, in name order. Another
    region's failing view older than FRESH_INTERVALS of the project's
    intervals (a poller of it gone and back, say) counts as not failing
    until it polls again."""
    fresh_since = polls[-1].at - timedelta(
        seconds=FRESH_INTERVALS * facts.interval_seconds + 60
    )
    views = {}
    for r in view.counted(facts.regions or None):
        if r == view.region_id:
            views[r] = own[:2]
            continue
        seen = facts.views.get(r)
        stale = seen is None or (
            seen.polled_at is not None and seen.polled_at < fresh_since
        )
        views[r] = _UNSEEN if stale else seen[:2]
    return views


def _decide(
    before: Streak,
    polls: list[Poll],
    view: RegionView,
    facts: Facts,
    own: tuple[Streak, str, list[Poll]],
    in_maintenance: Callable[[Poll], bool],
) -> Effect:
    """The project's new streak from its counted regions' views, and the
    transitions for the incident step."""
    if (
        before == SETTLED
        and _settled(own[0])
        and all(r == view.region_id for r in facts.views)
    ):
        # Most projects, most polls: every region's view is settled.
        return Effect(before=before, after=SETTLED)
    views = _counted_views(polls, view, facts, own)
    counted = list(views)
    if before == SETTLED and all(_settled(v[0]) for v in views.values()):
        return Effect(before=before, after=SETTLED)
    confirmed = [r for r in counted if views[r][0].state == DOWN]
    failing = [r for r in counted if views[r][0].failing]
    needed = quorum_needed(facts.quorum, len(counted))
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
    seen within `silent`: one small query. Written out, not made by the
    ORM: the writer asks it in every batch of several regions, and the
    ORM's took 0.4 ms of CPU against 0.06 (SQLite, 2026-11-26): 0.7 µs
    a poll, in batches of 500."""
    live_since = timezone.now() - silent
    live, blind, names = set(), set(), {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, name, last_seen_at, blind_since "
            f"FROM {quote(Region._meta.db_table)}"
        )
        rows = cursor.fetchall()
    for pk, name, seen, blind_since in rows:
        names[pk] = name
        seen = aware(seen)
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
    verdicts = []
    for poll in polls:
        up = effects[poll.project_id].after.state != DOWN
        verdicts.append(poll if poll.up is up else poll._replace(up=up))
    return verdicts
