"""Tell the running pollers about project changes, once they are committed.

Every project saved, deleted or changed in bulk within one transaction is
gathered into one batch, handed over when the transaction commits: an
import of a hundred projects is one call to each poller, not a hundred. A
rolled-back transaction hands over nothing, and the poller reads the
committed rows. A deleted project is synced like a changed one: the poller
finds it gone and stops polling it.

The calls themselves go out from a thread of their own (sync_sender.py),
so no web request waits for a poller. A failing call is logged and made
again a few times over the next 30 s; the poller's periodic reload
repairs what is still missed.

A change of a team's `trusted` changes how each of its projects may be
polled (POLL_BLOCKED_NETWORKS), so it syncs the team's projects the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import transaction

from polling.client import MAX_IDS_PER_CALL
from polling.fanout import FleetClient
from polling.sync_sender import SyncSender
from projects.models import Project, Team

# Past this many, one full reload is cheaper than reading each project.
MAX_SYNC_IDS = MAX_IDS_PER_CALL


def sync_projects(project_ids: Sequence[int]) -> bool:
    """Whether every live poller heard (the sender retries otherwise)."""
    client = FleetClient()
    if len(project_ids) > MAX_SYNC_IDS:
        return client.reload()
    return client.sync_projects(project_ids)


SENDER = SyncSender(sync_projects)


def project_saved(sender, instance: Project, using: str | None = None, **kwargs):
    sync_after_commit([instance.pk], using=using)


def project_deleted(sender, instance: Project, using: str | None = None, **kwargs):
    sync_after_commit([instance.pk], using=using)


def projects_bulk_changed(sender, project_ids: Sequence[int], **kwargs) -> None:
    sync_after_commit(project_ids)


def team_checked(sender, instance: Team, raw: bool = False, **kwargs) -> None:
    """pre_save: note whether `trusted` is about to change."""
    if raw or instance.pk is None:
        instance._trust_changed = False
        return
    stored = Team.objects.filter(pk=instance.pk).values_list("trusted", flat=True)
    instance._trust_changed = stored.first() not in (None, instance.trusted)


def team_saved(sender, instance: Team, using: str | None = None, **kwargs) -> None:
    if getattr(instance, "_trust_changed", False):
        ids = Project.objects.filter(team=instance).values_list("pk", flat=True)
        sync_after_commit(list(ids), using=using)


class Batch:
    """The ids of one transaction, sent when it commits (an on_commit
    callback)."""

    def __init__(self) -> None:
        self.ids: set[int] = set()

    def __call__(self) -> None:
        SENDER.submit(self.ids)


def sync_after_commit(project_ids: Iterable[int], using: str | None = None) -> None:
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        SENDER.submit(project_ids)  # autocommit: committed already
        return
    _open_batch(connection, using).ids.update(project_ids)


def _open_batch(connection, using: str | None) -> Batch:
    """The transaction's batch, registered on its first change. Looked up
    among the callbacks still registered: a savepoint rolled back takes
    its callbacks with it, and the next change then registers a new one."""
    for _, callback, _ in connection.run_on_commit:
        if isinstance(callback, Batch):
            return callback
    batch = Batch()
    transaction.on_commit(batch, using=using, robust=True)
    return batch
