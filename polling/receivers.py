"""Tell a running poller about project changes, once they are committed.

The call happens after the transaction commits: a rolled-back save never
reaches the poller, and the poller reads the committed row. robust=True
keeps a failing call from breaking the save; the client logs it, and the
poller's periodic reload repairs what was missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from django.db import transaction

from polling.fanout import FleetClient
from projects.models import Project

# Past this many, one full reload is cheaper than a call per project.
MAX_SYNC_CALLS = 20


def project_saved(sender, instance: Project, **kwargs) -> None:
    transaction.on_commit(partial(FleetClient().sync_project, instance.pk), robust=True)


def project_deleted(sender, instance: Project, **kwargs) -> None:
    transaction.on_commit(
        partial(FleetClient().remove_project, instance.pk), robust=True
    )


def projects_bulk_changed(sender, project_ids: Sequence[int], **kwargs) -> None:
    transaction.on_commit(partial(sync_projects, list(project_ids)), robust=True)


def sync_projects(project_ids: Sequence[int]) -> None:
    client = FleetClient()
    if len(project_ids) > MAX_SYNC_CALLS:
        client.reload()
        return
    for project_id in project_ids:
        if not client.sync_project(project_id):
            return  # the poller is unreachable; one warning is enough
