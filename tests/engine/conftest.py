"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest

from tests.support.executor_harness import Harness
from tests.support.executor_probe import open_handle


@pytest.fixture
def harness(target_server):
    made = []

    def make(limit: int, **options) -> Harness:
        made.append(Harness(target_server, limit=limit, **options))
        return made[-1]

    yield make
    for each in made:
        each.close()


@pytest.fixture
def handle(poll_mode, tls_ca_bundle):
    """A handle for run_poll() in each poll mode, trusting the tests'
    certificate authority (tls_ca). A module may define its own."""
    made = open_handle(poll_mode, ca_bundle=tls_ca_bundle)
    yield made
    if hasattr(made, "close"):
        made.close()
