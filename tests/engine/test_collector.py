"""Long-lived objects stay out of the garbage collector's full passes
(polling/engine/collector.py)."""

from __future__ import annotations

import dataclasses
import gc
from datetime import UTC, datetime

import pytest

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from tests.support.engine_fakes import NoSource, NoStore
from tests.support.scheduling import target

HOURLY = 3600


class FreshCopies(NoSource):
    """Every load makes new target objects, as reading the database does,
    each with the time of its project's latest poll."""

    def __init__(self) -> None:
        self.urls = {1: "http://127.0.0.1/a", 2: "http://127.0.0.1/b"}

    def load_all(self, pause=None):
        for project_id, url in self.urls.items():
            fresh = target(project_id, interval=HOURLY, url=url)
            yield dataclasses.replace(fresh, last_window=datetime.now(UTC))


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()
    # What the test froze may hold garbage cycles of earlier tests (their
    # database connections among them): collect them now, not at some
    # later full pass after the test database should be gone.
    gc.collect()


def started(config: PollerConfig, source: NoSource) -> Coordinator:
    coordinator = Coordinator(config, source=source, store=NoStore())
    coordinator.start()
    return coordinator


def test_a_reload_keeps_the_targets_it_has_and_takes_changed_ones():
    source = FreshCopies()
    coordinator = started(PollerConfig(reload_interval=HOURLY), source)
    try:
        first, second = coordinator.target(1), coordinator.target(2)
        source.urls[2] = "http://127.0.0.1/changed"

        summary = coordinator.reload_projects()

        assert summary.updated == 1
        assert coordinator.target(1) is first
        assert coordinator.target(2) is not second
        assert coordinator.target(2).url == "http://127.0.0.1/changed"
    finally:
        coordinator.stop()


@pytest.mark.usefixtures("unfrozen")
@pytest.mark.parametrize("freeze", [True, False])
def test_what_survives_a_load_is_frozen_only_when_asked(freeze):
    coordinator = started(
        PollerConfig(reload_interval=HOURLY, freeze_after_load=freeze), FreshCopies()
    )
    try:
        assert (gc.get_freeze_count() > 0) is freeze
        gc.unfreeze()
        coordinator.reload_projects()
        assert (gc.get_freeze_count() > 0) is freeze
    finally:
        coordinator.stop()
