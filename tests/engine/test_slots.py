"""Whether the concurrency limit, not the targets, delays polls: the
executor's slot tallies (engine/slots.py), and what /status, /metrics and
the poller page say with them."""

from __future__ import annotations

import re

import pytest

from django.urls import reverse

from polling.engine.metrics import PollerCollector
from polling.engine.slots import SlotUsage
from polling.engine.stats import PollStats
from polling.engine.status import PollerStatus
from polling.health import Level, limit_level
from tests.support.factories import quick_projects
from tests.support.waiting import wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_it_tallies_the_share_of_the_minute_every_slot_was_busy():
    clock = Clock()
    slots = SlotUsage(clock=clock)
    clock.now += 10
    slots.all_busy(True)
    clock.now += 20.5
    slots.all_busy(False)
    clock.now += 29.5
    report = slots.report()
    # The window is the seconds of the last minute, this one included.
    assert report.seconds == 59
    assert report.all_busy_share == pytest.approx(20.5 / 59)
    assert report.delaying()
    # A minute later that stretch is out of the window.
    clock.now += 60
    assert slots.report().all_busy_share == 0
    assert not slots.report().delaying()


def test_a_stretch_still_going_on_counts_up_to_now():
    clock = Clock()
    slots = SlotUsage(clock=clock)
    slots.all_busy(True)
    clock.now += 120
    assert slots.report().all_busy_share == 1.0
    clock.now += 30
    assert slots.report().all_busy_share == 1.0


def test_it_tallies_waits_and_poll_times_of_the_last_minute():
    clock = Clock()
    slots = SlotUsage(clock=clock)
    slots.taken(0.5)
    slots.taken(1.5)
    slots.ended(0.2)
    slots.ended(0.4)
    clock.now += 30
    report = slots.report()
    assert (report.polls, report.waited_mean_seconds) == (2, 1.0)
    assert report.waited_max_seconds == 1.5
    assert report.poll_mean_seconds == pytest.approx(0.3)
    clock.now += 31
    assert slots.report().polls == 0


def test_the_limit_it_suggests_follows_littles_law():
    clock = Clock()
    slots = SlotUsage(clock=clock)
    slots.all_busy(True)
    for _ in range(10):
        slots.ended(0.3)
    clock.now += 30
    report = slots.report()
    # 100,000 projects at 60 s answering in 300 ms: 500 in flight, 625
    # with headroom.
    assert report.suggested_limit(100, 100_000 / 60, 5000) == 700
    # Never less than twice the limit (a full limit hides the demand) nor
    # more than the ceiling.
    assert report.suggested_limit(400, 100_000 / 60, 5000) == 800
    assert report.suggested_limit(4000, 100_000 / 60, 5000) == 5000
    assert SlotUsage(clock=clock).report().suggested_limit(100, 1000, 5000) is None


@pytest.mark.parametrize(
    ("share", "delaying", "level"),
    [
        (0.0, False, Level.HEALTHY),
        (0.04, False, Level.HEALTHY),
        (0.05, True, Level.WARNING),
        (0.49, True, Level.WARNING),
        (0.5, True, Level.CRITICAL),
    ],
)
def test_limit_levels(share, delaying, level):
    assert limit_level(share, delaying) is level


def status(**fields) -> PollerStatus:
    values = {
        "state": "running",
        "active_projects": 100_000,
        "polls_total": 0,
        "polls_up": 0,
        "polls_down": 0,
        "polls_in_flight": 100,
        "max_concurrent_http": 100,
        "task_queue_depth": 1000,
        "result_queue_depth": 0,
        "results_pending_write": 0,
        "results_written": 0,
        "results_rejected": 0,
        "results_unsaved": 0,
        "failed_writes": 0,
        "skipped_busy": 0,
        "skipped_late": 0,
        "dropped_at_stop": 0,
        "lag_p50_ms": None,
        "lag_p99_ms": None,
        "lag_max_ms": None,
        "last_reload_at": None,
        "uptime_seconds": 60.0,
    }
    return PollerStatus(**(values | fields))


def test_the_status_says_plainly_when_the_limit_delays_polls():
    delayed = status(
        slots_all_busy_share=0.8,
        slot_wait_mean_ms=2500.0,
        slot_wait_max_ms=4000.0,
        suggested_max_concurrent_http=700,
    )
    assert delayed.limit_advice() == (
        "The limit delays polls: all 100 slots were busy 80 % of the last "
        "minute; polls waited 2.5 s on average (at most 4.0 s) for a free "
        "slot; set MAX_CONCURRENT_HTTP to 700."
    )
    assert delayed.line().endswith("set MAX_CONCURRENT_HTTP to 700.")
    assert PollerStatus.from_json(delayed.to_json()) == delayed
    calm = status(slots_all_busy_share=0.01)
    assert calm.limit_advice().startswith("The limit does not delay polls")
    assert "MAX_CONCURRENT_HTTP" not in calm.line()
    at_ceiling = status(
        max_concurrent_http=5000,
        slots_all_busy_share=1.0,
        suggested_max_concurrent_http=5000,
    )
    assert "run another poller" in at_ceiling.limit_advice()


def test_metrics_say_when_the_limit_delays_polls():
    def scrape(reported: PollerStatus) -> dict[str, float]:
        collector = PollerCollector(lambda: reported, set, PollStats())
        return {
            metric.name: metric.samples[0].value
            for metric in collector.collect()
            if metric.samples
        }

    delayed = scrape(
        status(
            slots_all_busy_share=0.8,
            slot_wait_mean_ms=2500.0,
            slot_wait_max_ms=4000.0,
            suggested_max_concurrent_http=700,
            worker_threads=2,
        )
    )
    assert delayed["poller_limit_delays_polls"] == 1
    assert delayed["poller_suggested_max_concurrent_http"] == 700
    assert delayed["poller_slots_all_busy_ratio"] == 0.8
    assert delayed["poller_slot_wait_seconds"] == 2.5
    assert delayed["poller_slot_wait_max_seconds"] == 4.0
    assert delayed["poller_worker_threads"] == 2
    calm = scrape(status())
    assert calm["poller_limit_delays_polls"] == 0
    assert calm["poller_suggested_max_concurrent_http"] == 100


def test_the_executor_counts_the_time_its_slots_were_all_busy(harness):
    h = harness(limit=2)
    h.executor.start()
    for project_id in range(6):
        h.submit(project_id, "/delay/300")
    assert len(h.outcomes(6)) == 6
    report = h.executor.slot_report()
    assert report.all_busy_share > 0
    assert report.delaying()
    assert report.polls == 6
    # Four of the six waited for one of the two slots.
    assert report.waited_max_seconds > 0
    assert report.poll_mean_seconds >= 0.3


def test_slots_never_all_busy_do_not_delay_polls(harness):
    h = harness(limit=50)
    h.executor.start()
    for project_id in range(6):
        h.submit(project_id, "/delay/100")
    assert len(h.outcomes(6)) == 6
    report = h.executor.slot_report()
    assert (report.all_busy_share, report.delaying()) == (0, False)


@pytest.mark.slow
def test_the_poller_page_names_the_limit_to_set(
    admin_client, running_poller, target_server
):
    coordinator = running_poller.coordinator
    coordinator.scale_to(1)
    quick_projects(target_server, 4, path="/delay/400", interval=10)
    coordinator.reload_projects()
    wait_until(lambda: coordinator.status().limit_delays_polls)
    page = admin_client.get(reverse("polling:poller")).content.decode()
    advice = re.search(
        r"The limit delays polls: the 1 slot was busy \d+ % of the last minute; "
        r"polls waited [\d.]+ s on average \(at most [\d.]+ s\) for a free slot; "
        r"set MAX_CONCURRENT_HTTP to (\d+)\.",
        page,
    )
    assert advice is not None
    assert int(advice.group(1)) >= 2
