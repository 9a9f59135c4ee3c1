"""The timers of the poller's own sockets wake a worker on a grid, so that
many of them due close together cost one wake-up (engine/transfers.py)."""

from __future__ import annotations

import socket
import time

import pytest

from polling.engine.sockets import SocketExchange
from polling.engine.transfers import (
    SOCKET_TIMER_GRAIN_SECONDS,
    Transfers,
    on_timer_grid,
)

pytestmark = pytest.mark.timeout(30)


class NeverReady(SocketExchange):
    """Waits on a socket nothing is sent to: only its deadline ends it."""

    def ready(self, mask: int) -> bool:
        return False


def test_timers_due_within_one_grain_end_in_one_wait():
    transfers = Transfers(lambda: None)
    pairs = [socket.socketpair() for _ in range(8)]
    exchanges = []
    try:
        # Eight deadlines a millisecond apart, all inside one grain of the
        # grid, far enough ahead that none has passed when waiting starts.
        start = on_timer_grid(time.monotonic() + 0.2)
        for n, (ours, _theirs) in enumerate(pairs):
            exchange = NeverReady(ours, timeout_seconds=5)
            exchange.deadline = start + 0.001 * (n + 1)
            transfers.add(exchange, owner=n)
            exchanges.append(exchange)
        batches = []  # what each wait that ended something ended
        while sum(map(len, batches)) < len(exchanges):
            if ended := transfers.wait(None):
                batches.append(ended)
        woken_at = time.monotonic()
    finally:
        for exchange in exchanges:
            exchange.close()
        for _ours, theirs in pairs:
            theirs.close()
        transfers.close()

    assert sorted(owner for owner, _code, _message in batches[0]) == list(range(8))
    assert all(exchange.error.startswith("timed out") for exchange in exchanges)
    # One wake-up at the grid's next point ended all eight (each at its own
    # instant would take eight), and none before its deadline (the grid's
    # point is a float product: a microsecond's leeway for its rounding).
    assert len(batches) == 1
    assert woken_at >= start + SOCKET_TIMER_GRAIN_SECONDS - 1e-6


def test_the_grid_never_wakes_before_the_deadline():
    for moment in (0.0, 0.004, 0.01, 1.23, 12345.6789, 98765.4321001):
        point = on_timer_grid(moment)
        assert point >= moment - 1e-9
        assert point - moment < SOCKET_TIMER_GRAIN_SECONDS + 1e-9
