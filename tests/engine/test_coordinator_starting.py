"""A change the control endpoint hears of while the poller starts (it
serves before the projects are loaded, and a load takes seconds at
300,000 projects) is followed once the poller runs, not refused: refused,
a project saved after the load read its row waited for the periodic
reload, 5 minutes, at every restart of a poller."""

from __future__ import annotations

import threading

import pytest

from polling.engine.config import PollerConfig
from polling.engine.coordinator import (
    DEFERRED,
    MAX_SYNCED_WHILE_STARTING,
    Coordinator,
    NotRunning,
)
from polling.engine.scheduler import ReloadSummary
from polling.engine.types import RunState, Target
from tests.support.engine_fakes import ListSource, NoStore


class PausedLoadSource(ListSource):
    """A ListSource whose load_all() has read its targets, as a query that
    has read its rows, and returns them only when the test says so."""

    def __init__(self, targets) -> None:
        super().__init__(targets)
        self.has_read = threading.Event()
        self.may_return = threading.Event()

    def load_all(self, pause=None):
        found = list(self.targets)
        self.has_read.set()
        assert self.may_return.wait(10), "the test never let the load return"
        return found


def target(project_id: int) -> Target:
    # Never polled in the test: an hour's interval, spread over an hour.
    return Target(
        project_id=project_id, url="http://127.0.0.1:9/", interval_seconds=3600
    )


@pytest.fixture
def starting_poller():
    """A poller whose start() is under way in a thread, its load paused
    after reading project 1; the test saves project 2 then."""
    source = PausedLoadSource([target(1)])
    poller = Coordinator(
        PollerConfig(spread_seconds=3600, reload_interval=3600, stop_timeout=5),
        source=source,
        store=NoStore(),
    )
    starting = threading.Thread(target=poller.start, name="test-start")
    starting.start()
    assert source.has_read.wait(10)
    source.targets.append(target(2))

    def finish_start() -> None:
        source.may_return.set()
        starting.join(10)
        assert poller.state is RunState.RUNNING

    yield poller, finish_start
    source.may_return.set()
    starting.join(10)
    poller.stop()


def test_a_project_synced_while_the_poller_starts_is_followed_once_it_runs(
    starting_poller,
):
    poller, finish_start = starting_poller
    assert poller.state is RunState.STARTING

    assert poller.sync_projects([2]) == {2: DEFERRED}
    assert poller.target(2) is None  # not yet: the scheduler is not filled
    finish_start()

    assert poller.target(1) is not None
    assert poller.target(2) is not None


def test_a_reload_asked_for_while_the_poller_starts_is_made_once_it_runs(
    starting_poller,
):
    poller, finish_start = starting_poller

    assert poller.reload_projects() == ReloadSummary(0, 0, 0)
    finish_start()

    assert poller.target(2) is not None


def test_many_projects_synced_while_it_starts_are_followed_by_one_reload(
    starting_poller, monkeypatch
):
    poller, finish_start = starting_poller
    loads = []
    monkeypatch.setattr(poller._source, "load_some", loads.append)
    many = range(2, 2 + MAX_SYNCED_WHILE_STARTING + 1)

    for first in range(2, many.stop, 100):  # as the web sends them: in calls
        poller.sync_projects(list(range(first, min(first + 100, many.stop))))
    finish_start()

    assert loads == []  # no read of 501 ids: a reload instead
    assert poller.target(2) is not None


def test_nothing_asked_while_it_starts_leaves_its_projects_as_loaded(
    starting_poller,
):
    poller, finish_start = starting_poller
    finish_start()

    assert poller.target(1) is not None
    assert poller.target(2) is None  # saved after the load, and no one said so


def test_a_stopped_poller_still_refuses_changes(starting_poller):
    poller, finish_start = starting_poller
    finish_start()
    poller.stop()

    with pytest.raises(NotRunning):
        poller.sync_projects([2])
    with pytest.raises(NotRunning):
        poller.reload_projects()
