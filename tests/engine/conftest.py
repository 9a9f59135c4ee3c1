"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest

from tests.support.executor_harness import Harness


@pytest.fixture
def harness(target_server):
    made = []

    def make(limit: int, **options) -> Harness:
        made.append(Harness(target_server, limit=limit, **options))
        return made[-1]

    yield make
    for each in made:
        each.close()
