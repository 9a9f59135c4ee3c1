"""The writer's child process: it saves what the poller's writer gives it,
in the poller's database, and a child that dies costs no result."""

from __future__ import annotations

import os
import queue
import signal
from dataclasses import replace
from datetime import timedelta

import pytest

from django.db import connection
from django.utils import timezone

from polling.engine.writer import ResultWriter, StoreUnavailable
from polling.leases import LeaseFence
from polling.store import DatabaseResultStore
from polling.writer_process import ProcessStore, StoreRefused
from projects.models import PollerNode, PollResult, Project
from tests.support.fleet import needs_postgresql
from tests.support.outcomes import outcome

# The child has a connection of its own: it sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def store():
    made = ProcessStore()
    yield made
    made.close()


def saved_polls(project: Project) -> list[tuple[str, int | None]]:
    return list(
        PollResult.objects.filter(project=project)
        .order_by("polled_at")
        .values_list("status", "response_time_ms")
    )


def test_the_child_saves_each_batch_in_the_pollers_database(make_project, store):
    project = make_project()
    polls = [outcome(project.pk, at=0, ms=11), outcome(project.pk, at=60, up=False)]

    assert store.save(polls) == 2

    assert saved_polls(project) == [("up", 11), ("down", 20)]
    project.refresh_from_db()
    assert project.last_status == "down"


def test_a_bad_outcome_is_set_aside_and_the_rest_of_its_batch_saved(
    make_project, store
):
    project = make_project()
    # Too large for any integer column on either database.
    bad = outcome(project.pk, at=60, ms=10**20)
    with pytest.raises(StoreRefused, match=r"^\w+Error: "):
        store.save([outcome(project.pk, at=0), bad])

    results: queue.Queue = queue.Queue()
    for each in (outcome(project.pk, at=0), bad, outcome(project.pk, at=120)):
        results.put(each)
    writer = ResultWriter(results, store, batch_size=3, batch_seconds=0.01)
    writer.start()
    writer.stop(timeout=30)

    assert (writer.written, writer.rejected) == (2, 1)
    assert len(saved_polls(project)) == 2


def test_a_child_that_died_is_replaced_and_its_batch_saved_by_the_next(
    make_project, store
):
    project = make_project()
    store.save([outcome(project.pk, at=0)])
    os.kill(store.child_pid, signal.SIGKILL)

    with pytest.raises(StoreUnavailable, match="writer process ended"):
        store.save([outcome(project.pk, at=60)])
    assert store.child_pid is None
    assert store.save([outcome(project.pk, at=60)]) == 1

    assert len(saved_polls(project)) == 2


def test_the_writer_starts_the_child_before_the_first_save(make_project, store):
    # Set up as the poller starts, not inside its first save (20 s of wall
    # time on a loaded machine, which the first results waited out).
    writer = ResultWriter(queue.Queue(), store)
    writer.start()
    pid = store.child_pid
    assert pid is not None

    project = make_project()
    assert store.save([outcome(project.pk)]) == 1
    assert store.child_pid == pid
    writer.stop(timeout=10)


def test_close_ends_the_child(make_project):
    project = make_project()
    store = ProcessStore()
    store.save([outcome(project.pk)])
    pid = store.child_pid
    store.close()

    assert store.child_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_child_ignores_the_signals_meant_for_the_poller(make_project, store):
    project = make_project()
    store.save([outcome(project.pk, at=0)])
    os.kill(store.child_pid, signal.SIGTERM)
    os.kill(store.child_pid, signal.SIGINT)

    assert store.save([outcome(project.pk, at=60)]) == 1


class Leases:
    """A LeaseKeeper's answers, without its thread."""

    def __init__(self, node_id: int, tokens: dict[int, int]) -> None:
        self.node_id = node_id
        self.shard_count = 4
        self._tokens = tokens

    def tokens(self) -> dict[int, int]:
        return self._tokens


@needs_postgresql
def test_with_a_fence_the_child_saves_only_the_shards_held(make_project):
    from polling.leases import ensure_lease_rows
    from projects.models import ShardLease

    now = timezone.now()
    poller = PollerNode.objects.create(
        name="a", host="test", pid=1, started_at=now, last_seen_at=now
    )
    ensure_lease_rows(4)
    projects = [make_project() for _ in range(8)]
    held = {p.pk % 4 for p in projects[:2]}
    ShardLease.objects.filter(shard__in=held).update(
        owner=poller, token=7, expires_at=now + timedelta(minutes=1)
    )
    fence = LeaseFence(Leases(poller.pk, dict.fromkeys(held, 7)))
    store = ProcessStore(fence=fence)
    try:
        saved = store.save([outcome(p.pk) for p in projects])
    finally:
        store.close()

    kept = [p for p in projects if p.pk % 4 in held]
    assert saved == len(kept)
    assert fence.dropped == len(projects) - len(kept)
    assert fence.statements == 1
    assert set(PollResult.objects.values_list("project", flat=True)) == {
        p.pk for p in kept
    }


def test_outcomes_reach_the_child_field_for_field(make_project, store):
    project = make_project(url="https://127.0.0.1/")
    sent = replace(
        outcome(project.pk, at=0),
        dns_ms=1,
        connect_ms=2,
        tls_ms=3,
        first_byte_ms=4,
        tls_expires_at=timezone.now().replace(microsecond=0),
        error="",
    )
    store.save([sent])

    row = PollResult.objects.get(project=project)
    assert (row.dns_ms, row.connect_ms, row.tls_ms, row.first_byte_ms) == (1, 2, 3, 4)
    project.refresh_from_db()
    assert project.tls_expires_at == sent.tls_expires_at


def test_it_tells_whether_the_database_answers(store, monkeypatch):
    # What the writer asks while it backs off from a failed save.
    assert store.reachable() is True
    if connection.vendor == "postgresql":
        monkeypatch.setitem(connection.settings_dict, "PORT", "9")  # discard
    else:
        monkeypatch.setitem(connection.settings_dict, "NAME", "/no/such/dir/db")

    assert store.reachable() is False
    assert DatabaseResultStore().reachable() is False
