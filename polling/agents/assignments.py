"""What an agent polls, and which agent of a region polls.

One agent of a region polls all of the region's projects; the others of
the region stand by, and the first of them to sync after the active one
has been silent for AGENT_SILENT_SECONDS takes over (docs/agents.md says
why standing by, not sharing). The choice is made in the database, in
one transaction per sync, so two servers' workers never make two agents
active; for the moments a handover overlaps, the writer keeps one result
per project, region and window whoever sends it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from polling.engine.types import Target
from polling.store.targets import iter_targets, polled_in
from projects.models import Agent, Project, Region


@dataclass(frozen=True, slots=True)
class AgentReport:
    """What an agent says of itself at each sync."""

    version: str = ""
    host: str = ""
    buffered_results: int = 0
    buffered_oldest_at: datetime | None = None


def check_in(agent: Agent, report: AgentReport, now: datetime) -> bool:
    """Note the agent alive now, and its region too when it is the
    region's active agent; returns whether it is.

    Only the active agent keeps Region.last_seen_at fresh: a standby polls
    nothing, so a region whose active agent died is dark (the quorum's
    dark-region detection reads Region.last_seen_at) until a standby takes
    over, as a region of pollers is until one is back."""
    silent_after = now - timedelta(seconds=settings.AGENT_SILENT_SECONDS)
    with transaction.atomic():
        # Locks the region's agents: two syncs at once agree on who polls.
        peers = list(
            Agent.objects.select_for_update()
            .filter(region_id=agent.region_id, revoked_at=None)
            .order_by("pk")
        )
        holder = next(
            (
                peer
                for peer in peers
                if peer.active_since is not None
                and peer.last_seen_at is not None
                and peer.last_seen_at >= silent_after
            ),
            None,
        )
        active_since = None
        if holder is None or holder.pk == agent.pk:
            active_since = holder.active_since if holder else now
            # Whoever held the region before is told at its next sync.
            Agent.objects.filter(region_id=agent.region_id).exclude(pk=agent.pk).update(
                active_since=None
            )
        Agent.objects.filter(pk=agent.pk).update(
            last_seen_at=now,
            version=report.version[:50],
            host=report.host[:255],
            buffered_results=max(report.buffered_results, 0),
            buffered_oldest_at=report.buffered_oldest_at,
            active_since=active_since,
        )
        if active_since is not None:
            Region.objects.filter(pk=agent.region_id).update(last_seen_at=now)
    return active_since is not None


def _polled_by(agent: Agent) -> Q:
    """The projects an agent may poll: its region's, of its team when it
    has one; never heartbeats, whose deadlines the server keeps."""
    where = ~Q(kind=Project.Kind.HEARTBEAT)
    if agent.team_id is not None:
        where &= Q(team_id=agent.team_id)
    return where


def all_targets(agent: Agent) -> list[Target]:
    return list(iter_targets(where=_polled_by(agent), region_id=agent.region_id))


def polled_ids(agent: Agent) -> list[int]:
    """The ids of every project the agent polls. Unordered: sorting by
    name (the model's order) read every row's name at each sync, which
    cost more than finding them (20,000 projects: 96 ms against 60)."""
    return list(
        Project.objects.filter(
            polled_in(agent.region_id), _polled_by(agent), enabled=True
        )
        .order_by()
        .values_list("pk", flat=True)
    )


def changed_targets(agent: Agent, since: datetime) -> tuple[list[Target], list[int]]:
    """The targets of the projects the agent polls saved since `since`,
    and the ids of those of its team (or any, for an install-wide agent)
    saved since then that it no longer polls: disabled, moved to another
    region, made a heartbeat. Both read through the index on
    `updated_at`, so a sync costs the same for 50 projects or 300,000."""
    saved = Q(updated_at__gte=since)
    targets = list(
        iter_targets(where=_polled_by(agent) & saved, region_id=agent.region_id)
    )
    polled = {target.project_id for target in targets}
    mine = Q() if agent.team_id is None else Q(team_id=agent.team_id)
    saved_ids = (
        Project.objects.filter(saved, mine).order_by().values_list("pk", flat=True)
    )
    return targets, [pid for pid in saved_ids if pid not in polled]


def some_targets(agent: Agent, project_ids: Collection[int]) -> list[Target]:
    where = _polled_by(agent) & Q(pk__in=list(project_ids))
    return list(iter_targets(where=where, region_id=agent.region_id))


def allowed_ids(agent: Agent, project_ids: Collection[int]) -> set[int]:
    """Those of these projects whose results the agent may send."""
    return set(
        Project.objects.filter(
            polled_in(agent.region_id), _polled_by(agent), pk__in=list(project_ids)
        )
        .order_by()
        .values_list("pk", flat=True)
    )
