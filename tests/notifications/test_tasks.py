"""The delivery task's run: it stays on for retries and digest windows due
within its run, looking for new rows while it waits, and only one run
waits for each wake-up."""

from __future__ import annotations

import pytest

from projects.models import NotificationChannel
from projects.notifications.delivery import Wake
from projects.notifications.tasks import (
    LINGER_SECONDS,
    WATCH_SECONDS,
    deliver_notifications,
    promise_wakeup,
)


@pytest.fixture
def hook(make_channel, webhook_receiver):
    return make_channel(url=webhook_receiver.url())


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.ALERT_DIGEST_SECONDS = 30
    settings.ALERT_DELIVERY_TIMEOUT = 2


def run(clock, *, while_waiting=None, **kwargs) -> tuple[int, list[float]]:
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        clock.advance(seconds)
        if while_waiting is not None:
            while_waiting(len(waits))

    return deliver_notifications(now=clock.now, sleep=sleep, **kwargs), waits


def test_a_run_waits_for_a_digest_window_that_closes_within_it(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook)
    queue_notification(hook)

    sent, waits = run(clock)

    assert sent == 2
    assert sum(waits) == 30.0
    assert set(waits) == {WATCH_SECONDS}
    assert webhook_receiver.events() == ["incident.opened"] * 2


def test_a_run_sends_a_row_that_arrives_while_it_waits(
    hook, queue_notification, webhook_receiver, clock
):
    def arrive(waited: int) -> None:
        if waited == 1:
            queue_notification(hook, "incident.reminder")

    # Nothing is due when it starts: it stays LINGER_SECONDS, looking.
    sent, waits = run(clock, while_waiting=arrive)

    assert sent == 1
    assert sum(waits) == LINGER_SECONDS
    assert webhook_receiver.events() == ["incident.reminder"]


def test_a_run_waits_for_a_retry_due_within_it(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(503)
    queue_notification(hook, "incident.reminder")

    sent, waits = run(clock)

    assert sent == 2
    assert 24 <= sum(waits) <= 36
    assert [r.status for r in webhook_receiver.requests] == [503, 200]


def test_a_run_ends_when_the_next_wake_is_beyond_it(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(503, 503)
    queue_notification(hook, "incident.reminder")

    sent, waits = run(clock, run_seconds=45)

    # 30 s, then 2 min: the second retry is the next run's.
    assert sent == 2
    assert 24 <= sum(waits) <= 36


def test_a_run_does_not_wait_when_another_promised_to(
    hook, queue_notification, webhook_receiver, clock
):
    from datetime import timedelta

    queue_notification(hook)
    queue_notification(hook)
    promise_wakeup(Wake(clock.now() + timedelta(seconds=30), hook.pk), clock.now())

    sent, waits = run(clock)

    # The first goes at once; the second's window is the other run's.
    assert sent == 1
    assert sum(waits) == LINGER_SECONDS


def test_a_promise_is_taken_over_once_it_has_passed(hook, clock):
    from datetime import timedelta

    soon = Wake(clock.now() + timedelta(seconds=10), hook.pk)
    assert promise_wakeup(soon, clock.now()) is True
    assert promise_wakeup(soon, clock.now()) is False
    sooner = Wake(clock.now() + timedelta(seconds=5), hook.pk)
    assert promise_wakeup(sooner, clock.now()) is True

    clock.advance(11)
    later = Wake(clock.now() + timedelta(seconds=10), hook.pk)
    assert promise_wakeup(later, clock.now()) is True
    hook.refresh_from_db()
    assert hook.deliverer_wakes_at == later.at


def test_nothing_pending_ends_the_run_after_its_linger(db, clock):
    assert run(clock) == (0, [WATCH_SECONDS, WATCH_SECONDS])
    assert not NotificationChannel.objects.exists()


def test_delivery_and_reminders_are_scheduled_every_minute(db):
    from pydoc import locate

    from django_q.models import Schedule

    schedules = Schedule.objects.filter(
        name__in=["deliver notifications", "queue reminders"]
    )
    assert sorted(s.name for s in schedules) == [
        "deliver notifications",
        "queue reminders",
    ]
    for schedule in schedules:
        assert (schedule.schedule_type, schedule.minutes) == (Schedule.MINUTES, 1)
        assert callable(locate(schedule.func))


def test_a_delivery_run_is_asked_for_at_most_once_a_second(db, monkeypatch):
    from django_q.models import OrmQ

    from projects.notifications import trigger

    monkeypatch.setattr(trigger, "_last_request", float("-inf"))

    trigger.request_delivery()
    trigger.request_delivery()

    assert OrmQ.objects.count() == 1
    monkeypatch.setattr(trigger, "_last_request", float("-inf"))
    trigger.request_delivery()
    assert OrmQ.objects.count() == 2


def test_a_row_another_run_holds_is_left_to_it(hook, queue_notification, clock):
    from datetime import timedelta

    row = queue_notification(hook, "incident.reminder")
    row.claimed_until = clock.now() + timedelta(seconds=60)  # a send in flight
    row.save()

    sent, waits = run(clock)

    # Neither sent twice nor waited for in a busy loop: the run ends.
    assert (sent, sum(waits)) == (0, LINGER_SECONDS)
