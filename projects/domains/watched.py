"""Which projects watch which registered domain."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from projects.checks.domain_names import registrable_domain, target_host
from projects.models import Project


@dataclass(frozen=True, slots=True)
class Watcher:
    project_id: int
    domain: str | None  # None: the URL names no registered domain (any more)
    warning_days: int
    enabled: bool
    shown_expiry: datetime | None  # Project.domain_expires_at as stored


def domain_of(project: Project) -> str | None:
    """The registered domain a project's warning watches; None when the
    warning is off or its target has none (a heartbeat, an address)."""
    if project.domain_expiry_warning_days is None or not project.url:
        return None
    if project.is_heartbeat or project.is_flow:
        return None
    return registrable_domain(target_host(project.url))


def watchers() -> list[Watcher]:
    """Every project with the warning on, paused ones too: a registration
    lapses whether or not its project is polled."""
    rows = (
        Project.objects.filter(domain_expiry_warning_days__isnull=False)
        .exclude(kind__in=[Project.Kind.HEARTBEAT, Project.Kind.FLOW])
        .values_list(
            "id", "url", "domain_expiry_warning_days", "enabled", "domain_expires_at"
        )
    )
    return [
        Watcher(pk, registrable_domain(target_host(url)), days, enabled, shown)
        for pk, url, days, enabled, shown in rows.iterator(chunk_size=2000)
    ]
