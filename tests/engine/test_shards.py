"""Ownership: which projects a poller may poll, and until when; the
coordinator reports it in /status and /metrics."""

from __future__ import annotations

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.shards import Ownership
from polling.engine.types import Target
from tests.support.engine_fakes import NoSource, NoStore


def test_a_project_belongs_to_the_shard_of_its_id_modulo_the_count():
    ownership = Ownership(4, frozenset({1, 2}), trusted_until=10)
    assert [ownership.owns(p) for p in range(6)] == [
        False,
        True,
        True,
        False,
        False,
        True,
    ]
    assert ownership.trusted(9.9) is True
    assert ownership.trusted(10) is False


def test_a_lone_poller_owns_everything_for_ever():
    ownership = Ownership.everything()
    assert ownership.owns(12345) is True
    assert ownership.trusted(1e12) is True
    assert Ownership.nothing(8).trusted(0) is False


def test_the_shards_held_show_in_status_and_metrics():
    coordinator = Coordinator(PollerConfig(), source=NoSource(), store=NoStore())
    coordinator.set_ownership(Ownership(16, frozenset({3, 4, 5})))
    status = coordinator.status()
    assert (status.shards_held, status.shard_count) == (3, 16)
    assert b"poller_shards_held 3.0" in coordinator.metrics_text()


def test_lease_statements_show_in_status_and_metrics():
    coordinator = Coordinator(
        PollerConfig(), source=NoSource(), store=NoStore(), lease_statements=lambda: 7
    )
    assert coordinator.status().lease_statements == 7
    assert b"poller_lease_statements_total 7.0" in coordinator.metrics_text()


def test_a_lone_poller_runs_no_lease_statements():
    coordinator = Coordinator(PollerConfig(), source=NoSource(), store=NoStore())
    assert coordinator.status().lease_statements == 0


class CountingSource(NoSource):
    """Eight projects, and how often all of them were loaded."""

    def __init__(self) -> None:
        self.loads = 0

    def load_all(self, pause=None):
        self.loads += 1
        # A port nobody listens on: a poll fails at once.
        return [
            Target(p, "http://127.0.0.1:9/", interval_seconds=3600) for p in range(8)
        ]


def test_a_poller_holding_no_shard_loads_its_projects_once_it_gets_some():
    source = CountingSource()
    coordinator = Coordinator(
        PollerConfig(spread_seconds=1),
        source=source,
        store=NoStore(),
        ownership=Ownership.nothing(4),
    )
    coordinator.start()
    try:
        assert source.loads == 0
        coordinator.set_ownership(Ownership(4, frozenset({1})))
        assert source.loads == 1
        polled = [p for p in range(8) if coordinator.target(p) is not None]
        assert polled == [1, 5]
    finally:
        coordinator.stop(timeout=10)
