"""A project saved: its domain warning follows its URL at once."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from projects.domains.tasks import request_lookup
from projects.domains.warnings import resolve_unwatched
from projects.domains.watched import domain_of
from projects.models import DomainRegistration, Project


def follow_watched_domain(sender, instance: Project, created: bool, **kwargs) -> None:
    """post_save of Project (connected in ProjectsConfig.ready), in the
    saving transaction: an open domain incident about another domain than
    the one it watches now is resolved, and its copy of the domain's date
    is the cached one (none yet: a lookup is asked for, after commit).
    A receiver, so the models never import this package."""
    domain = domain_of(instance)
    now = timezone.now()
    if not created:
        resolve_unwatched(instance, domain, now)
    if domain is None:
        if instance.domain_expires_at is not None:
            _show(instance, None)  # its URL names no registered domain now
        return
    registration, made = DomainRegistration.objects.get_or_create(
        domain=domain, defaults={"next_check_at": now}
    )
    if made:
        transaction.on_commit(request_lookup, robust=True)
    if instance.domain_expires_at != registration.expires_at:
        _show(instance, registration.expires_at)


def _show(project: Project, expires_at) -> None:
    # update(), not save(): no second post_save, no updated_at change.
    Project.objects.filter(pk=project.pk).update(domain_expires_at=expires_at)
    project.domain_expires_at = expires_at
