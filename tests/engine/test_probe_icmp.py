"""The ping check against loopback addresses, run both ways a poll runs:
up over IPv4 and IPv6, every ping lost to a firewall rule that drops
echo requests to one address, part of them lost, and the reasons as text.
Skipped, saying why, where this machine cannot ping or change its
firewall."""

from __future__ import annotations

import queue
from datetime import UTC, datetime

import pytest

from polling.engine.executor import Executor
from polling.engine.handoff import TaskQueue
from polling.engine.pinger import icmp_mode
from polling.engine.probe import make_transfers, poll_steps
from polling.engine.stats import PollStats
from polling.engine.types import Outcome, Target, Task
from tests.support import firewall
from tests.support.executor_probe import open_handle, run_poll

MODE = icmp_mode()
pytestmark = pytest.mark.skipif("cannot ping" in MODE, reason=MODE)
NO_FIREWALL = firewall.unavailable()


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


def dropped(poll_mode: str, number: int) -> str:
    """An address of its own for each test and way of polling, so that
    test workers running side by side never drop each other's pings."""
    return f"127.0.77.{number * 2 + (poll_mode == 'on-executor')}"


def poll(handle, url: str, **fields) -> Outcome:
    fields.setdefault("timeout_seconds", 2)
    return run_poll(
        handle, Task(Target(project_id=7, url=url, **fields), datetime.now(UTC))
    )


@pytest.mark.parametrize("url", ["icmp://127.0.0.1", "icmp://[::1]"])
def test_a_host_that_answers_is_up_with_its_round_trips(handle, url):
    outcome = poll(handle, url)
    assert (outcome.up, outcome.error) == (True, "")
    assert outcome.message.startswith("3 of 3 replies, round trip min/avg/max ")
    assert outcome.message.endswith(" ms, loss 0 %")
    assert outcome.response_time_ms is not None
    low, average, high = outcome.rtt_us
    assert 0 < low <= average <= high
    assert outcome.loss_percent == 0


def test_the_count_of_pings_is_the_projects(handle):
    outcome = poll(handle, "icmp://127.0.0.1", ping_count=5)
    assert outcome.message.startswith("5 of 5 replies")


@pytest.mark.skipif(bool(NO_FIREWALL), reason=NO_FIREWALL or "-")
def test_a_host_whose_pings_are_dropped_is_down(handle, poll_mode):
    address = dropped(poll_mode, 1)
    with firewall.DroppedPings(address):
        outcome = poll(handle, f"icmp://{address}", timeout_seconds=1)
    assert (outcome.up, outcome.error) == (False, "3 of 3 pings lost")
    assert outcome.message == "0 of 3 replies, loss 100 %"
    assert (outcome.rtt_us, outcome.loss_percent) == (None, 100)


@pytest.mark.skipif(bool(NO_FIREWALL), reason=NO_FIREWALL or "-")
def test_loss_above_the_limit_is_down(handle, poll_mode):
    address = dropped(poll_mode, 2)
    with firewall.DroppedPings(address, every_other=True):
        outcome = poll(
            handle,
            f"icmp://{address}",
            ping_count=4,
            ping_max_loss_percent=25,
            timeout_seconds=1,
        )
    assert (outcome.up, outcome.error) == (False, "loss 50 % > 25 %")
    assert outcome.message.startswith("2 of 4 replies")


@pytest.mark.skipif(bool(NO_FIREWALL), reason=NO_FIREWALL or "-")
def test_loss_within_the_limit_is_up(handle, poll_mode):
    address = dropped(poll_mode, 3)
    with firewall.DroppedPings(address, every_other=True):
        outcome = poll(handle, f"icmp://{address}", ping_count=4, timeout_seconds=1)
    assert (outcome.up, outcome.error) == (True, "")
    assert outcome.message.endswith("loss 50 %")


def test_a_blocked_address_is_never_pinged(poll_mode):
    handle = open_handle(poll_mode, blocked_networks=["127.0.0.0/8"])
    try:
        outcome = poll(handle, "icmp://127.0.0.1")
    finally:
        handle.close()
    assert outcome.error == "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"


def test_the_poller_says_how_it_pings():
    # These tests run as root here, or with ping_group_range open.
    assert MODE in (
        "ICMP checks use raw ICMP sockets",
        "ICMP checks use datagram ICMP sockets",
    )


def test_many_pings_at_once_share_the_workers_socket():
    tasks, results = TaskQueue(100), queue.Queue()
    executor = Executor(
        tasks,
        results,
        limit=20,
        poll=poll_steps,
        make_transfers=make_transfers,
        on_finished=lambda project_id, outcome: None,
        stats=PollStats(),
        max_threads=1,
    )
    executor.start()
    try:
        for number in range(1, 21):
            target = Target(project_id=number, url=f"icmp://127.0.0.{number}")
            tasks.put(Task(target, datetime.now(UTC)))
        outcomes = [results.get(timeout=30) for _ in range(20)]
    finally:
        executor.stop(timeout=10)
    assert sorted(o.project_id for o in outcomes if o.up) == list(range(1, 21))
    assert executor.threads_started == 1
