"""The registration a project's domain warning watches, for its page."""

from __future__ import annotations

from projects.domains.watched import domain_of
from projects.models import DomainRegistration, Project


def watched_registration(project: Project) -> DomainRegistration | None:
    """The cached registration of the project's domain (no lookup: the
    tasks process makes those); None when its warning is off or its
    target names no registered domain, and an unsaved row (the domain
    alone) when no run has seen it yet."""
    domain = domain_of(project)
    if domain is None:
        return None
    found = DomainRegistration.objects.filter(domain=domain).first()
    return found or DomainRegistration(domain=domain)
