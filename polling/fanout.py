"""Tell every live poller about a project change.

With several pollers (PostgreSQL, shard leases) only the one that holds
the project's shard polls it, and the web process does not know which one
that is. Each poller keeps a PollerNode row with its control URL; a change
goes to every live one, and each ignores projects outside its shards.
Why this rather than LISTEN/NOTIFY: it reuses the authenticated control
endpoint and its client, needs no dedicated connection and resync in each
poller, and is the same path with one poller on SQLite; a save costs one
short HTTP call per live poller.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from polling.client import ControlClient
from polling.node import BEAT_SECONDS
from projects.models import PollerNode


def live_control_urls() -> list[str]:
    """The control URLs of the pollers seen lately and not stopped."""
    recent = max(2 * BEAT_SECONDS, settings.POLLER_LEASE_TTL)
    try:
        return list(
            PollerNode.objects.filter(
                stopped_at__isnull=True,
                last_seen_at__gte=timezone.now() - timedelta(seconds=recent),
            )
            .exclude(control_url="")
            .order_by("control_url")
            .values_list("control_url", flat=True)
            .distinct()
        )
    except DatabaseError:
        return []


class FleetClient:
    """The ControlClient calls that change what is polled, made on every
    live poller; POLLER_CONTROL_URL when none has registered."""

    def sync_project(self, project_id: int) -> bool:
        return self._each(lambda client: client.sync_project(project_id))

    def sync_projects(self, project_ids: Sequence[int]) -> bool:
        return self._each(lambda client: client.sync_projects(project_ids))

    def remove_project(self, project_id: int) -> bool:
        return self._each(lambda client: client.remove_project(project_id))

    def reload(self) -> bool:
        return self._each(lambda client: client.reload())

    def _each(self, call) -> bool:
        """True when every live poller heard of it (the sender makes the
        call again otherwise). The pollers are looked up at call time:
        after the commit, not in the save."""
        urls = live_control_urls()
        clients = [ControlClient(base_url=url) for url in urls] or [ControlClient()]
        heard = [call(client) for client in clients]  # every one, no short cut
        return all(heard)
