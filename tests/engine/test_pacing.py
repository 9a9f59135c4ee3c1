"""The periodic reload is paced so the poll workers keep the interpreter
lock most of the time (polling/engine/pacing.py)."""

from __future__ import annotations

import pytest

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.pacing import Pacer, no_pause
from polling.store import targets as store
from tests.support.engine_fakes import NoSource, NoStore
from tests.support.waiting import wait_until


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_paced_job_rests_so_that_it_works_its_share_of_the_time():
    time = FakeTime()
    pace = Pacer(0.25, clock=lambda: time.now, sleep=time.sleep)
    time.now += 0.1  # a step's work
    pace()
    time.now += 0.02
    pace()
    assert time.sleeps == pytest.approx([0.3, 0.06])
    assert pace.slept == pytest.approx(0.36)


def test_a_share_outside_0_to_1_is_refused():
    with pytest.raises(ValueError, match="share"):
        Pacer(0)


@pytest.mark.django_db
def test_loading_the_projects_pauses_after_every_chunk(make_project, monkeypatch):
    monkeypatch.setattr(store, "LOAD_CHUNK", 3)
    for number in range(7):
        make_project(name=f"p{number}")
    pauses = []

    targets = list(store.iter_targets(pause=lambda: pauses.append(1)))

    assert len(targets) == 7
    assert len(pauses) == 2


class RecordingSource(NoSource):
    def __init__(self) -> None:
        self.pauses: list = []

    def load_all(self, pause=no_pause):
        self.pauses.append(pause)
        return []


def test_only_the_periodic_reload_is_paced():
    source = RecordingSource()
    coordinator = Coordinator(
        PollerConfig(reload_interval=0.05), source=source, store=NoStore()
    )
    coordinator.start()
    try:
        wait_until(lambda: len(source.pauses) >= 2)
    finally:
        coordinator.stop(timeout=10)
    assert source.pauses[0] is no_pause  # at start, nothing is polling yet
    assert isinstance(source.pauses[1], Pacer)
