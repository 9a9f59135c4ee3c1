"""The periodic reload reads only the projects that changed, and the ids
of all of them (polling/store.py load_changes, Coordinator._load_changes)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

from polling.engine.config import PollerConfig
from polling.engine.coordinator import CHANGES_OVERLAP, Coordinator
from polling.store import DatabaseResultStore, DatabaseTargetSource, load_changes
from projects.models import Project
from tests.support.waiting import wait_until

HOURLY = {"interval": 1, "interval_unit": "hours"}
LONG_AGO = timedelta(hours=1) + CHANGES_OVERLAP


def age(*projects: Project) -> None:
    """As if they were last saved long before the latest load."""
    then = timezone.now() - LONG_AGO
    Project.objects.filter(pk__in=[p.pk for p in projects]).update(updated_at=then)


@pytest.mark.django_db
def test_changes_are_the_saved_the_unknown_and_the_heartbeat_projects(make_project):
    unchanged, saved, unknown = (make_project(**HOURLY) for _ in range(3))
    heartbeat = make_project(kind=Project.Kind.HEARTBEAT, url="")
    disabled = make_project(enabled=False)
    age(unchanged, saved, unknown, heartbeat, disabled)
    since = timezone.now() - timedelta(minutes=1)
    saved.url = "http://127.0.0.1:9/saved"
    saved.save()

    ids, targets = load_changes(since, known=lambda pid: pid != unknown.pk)

    assert sorted(ids) == sorted(p.pk for p in (unchanged, saved, unknown, heartbeat))
    by_id = {target.project_id: target for target in targets}
    assert sorted(by_id) == sorted(p.pk for p in (saved, unknown, heartbeat))
    assert by_id[saved.pk].url == "http://127.0.0.1:9/saved"


class CountingSource(DatabaseTargetSource):
    """The database, and the targets each periodic reload read."""

    def __init__(self) -> None:
        self.reads: list[set[int]] = []

    def load_changes(self, since, known, pause=None):
        ids, targets = super().load_changes(since, known)
        self.reads.append({target.project_id for target in targets})
        return ids, targets


@pytest.mark.django_db(transaction=True)
def test_the_periodic_reload_follows_the_database_reading_only_changes(
    make_project,
):
    edited, kept, disabled, enabled_later = (make_project(**HOURLY) for _ in range(4))
    Project.objects.filter(pk=enabled_later.pk).update(enabled=False)
    age(edited, kept, disabled, enabled_later)
    source = CountingSource()
    poller = Coordinator(
        PollerConfig(reload_interval=0.1), source=source, store=DatabaseResultStore()
    )
    poller.start()
    try:
        kept_target = poller.target(kept.pk)
        edited.url = "http://127.0.0.1:9/edited"
        edited.save()
        # update() bypasses save(): no new timestamp, but the ids tell.
        Project.objects.filter(pk=disabled.pk).update(enabled=False)
        Project.objects.filter(pk=enabled_later.pk).update(enabled=True)

        def followed() -> bool:
            target = poller.target(edited.pk)
            return (
                target is not None
                and target.url == "http://127.0.0.1:9/edited"
                and poller.target(disabled.pk) is None
                and poller.target(enabled_later.pk) is not None
            )

        wait_until(followed, timeout=5)
        assert poller.target(kept.pk) is kept_target
        assert all(kept.pk not in read for read in source.reads)
        assert any(enabled_later.pk in read for read in source.reads)
    finally:
        poller.stop(timeout=10)
