"""A periodic reload that finds nothing changed (the same ids, each target
read equal to the one scheduled) replaces nothing: an agent reloads every
second, and replacing 300,000 projects by themselves cost it a fifth of
its CPU. A change is still applied at the next reload."""

from __future__ import annotations

import logging

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from tests.support.engine_fakes import NoSource, NoStore
from tests.support.scheduling import target
from tests.support.waiting import wait_until


class SteadySource(NoSource):
    """Fresh but equal targets at every read, as a database or a server
    gives them; counts the reads."""

    def __init__(self) -> None:
        self.urls = {1: "http://127.0.0.1/a", 2: "http://127.0.0.1/b"}
        self.reads = 0

    def load_all(self, pause=None):
        self.reads += 1
        return [target(pid, url=url) for pid, url in self.urls.items()]


def reloads(caplog) -> int:
    return sum(r.getMessage().startswith("Reloaded projects") for r in caplog.records)


def test_a_reload_with_nothing_changed_replaces_nothing(caplog):
    source = SteadySource()
    poller = Coordinator(
        PollerConfig(reload_interval=0.01, spread_seconds=1),
        source=source,
        store=NoStore(),
    )
    with caplog.at_level(logging.INFO, logger="polling"):
        poller.start()
        try:
            wait_until(lambda: source.reads >= 20)
            kept = poller.target(1)
            # The start's load, then the first periodic reload (it has no
            # earlier one to compare with); none since.
            assert reloads(caplog) == 2
            assert poller.status().last_reload_at is not None

            source.urls[2] = "http://127.0.0.1/changed"
            wait_until(lambda: reloads(caplog) == 3)
            assert poller.target(2).url == "http://127.0.0.1/changed"
            assert poller.target(1) is kept
            reads = source.reads
            wait_until(lambda: source.reads >= reads + 20)
            assert reloads(caplog) == 3
        finally:
            poller.stop(timeout=5)
