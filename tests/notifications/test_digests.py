"""Alerts in seconds, storms in one digest: the first grouped event for a
channel in a quiet period goes at once; those inside the window it opens
(ALERT_DIGEST_SECONDS) go together when it closes, as one digest when
more than ALERT_DIGEST_THRESHOLD. The clock is injected; the receiver is
real."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.models import Notification
from projects.notifications import digests
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due, next_wake
from projects.notifications.digests import Waiting, chosen

CONFIG = DeliveryConfig(digest_threshold=5, digest_seconds=30, timeout_seconds=2)


@pytest.fixture
def hook(make_channel, webhook_receiver):
    return make_channel(url=webhook_receiver.url())


def deliver(clock) -> int:
    return deliver_due(now=clock.now, config=CONFIG)


def test_a_lone_event_goes_at_once(hook, queue_notification, webhook_receiver, clock):
    queue_notification(hook)

    assert deliver(clock) == 1

    assert webhook_receiver.events() == ["incident.opened"]
    assert next_wake(clock.now(), CONFIG) is None


def test_events_inside_the_window_wait_for_it_to_close(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook)
    deliver(clock)
    clock.advance(5)
    queue_notification(hook)
    queue_notification(hook)

    assert deliver(clock) == 0
    assert next_wake(clock.now(), CONFIG).at == clock.now() + timedelta(seconds=25)
    clock.advance(24.9)
    assert deliver(clock) == 0
    clock.advance(0.1)
    assert deliver(clock) == 2
    assert webhook_receiver.events() == ["incident.opened"] * 3


def test_a_quiet_period_resets_the_window(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook)
    deliver(clock)
    clock.advance(30)
    queue_notification(hook)

    assert deliver(clock) == 1

    assert webhook_receiver.events() == ["incident.opened"] * 2


def test_a_storm_of_200_in_10_seconds_is_two_messages_per_channel(
    make_channel, make_project, queue_notification, clock
):
    from tests.support.webhook_receiver import WebhookReceiver

    with WebhookReceiver() as first, WebhookReceiver() as second:
        channels = [make_channel(url=first.url()), make_channel(url=second.url())]
        # One failure every 50 ms, delivered as it comes, as the tasks
        # process does.
        for _ in range(200):
            project = make_project()
            for channel in channels:
                queue_notification(channel, project=project)
            deliver(clock)
            clock.advance(0.05)
        clock.advance(20)
        deliver(clock)

        for receiver in (first, second):
            assert receiver.events() == ["incident.opened", "digest"]
            assert receiver.requests[1].json()["digest"]["count"] == 199
    assert not Notification.objects.filter(state="pending").exists()


def test_a_storm_caught_in_one_batch_is_one_digest_at_once(
    make_channel, queue_notification, webhook_receiver, clock, make_project
):
    channels = [make_channel(url=webhook_receiver.url(f"/{n}")) for n in range(2)]
    for _ in range(50):
        project = make_project()
        for channel in channels:
            queue_notification(channel, project=project)

    deliver(clock)

    assert sorted(r.path for r in webhook_receiver.requests) == ["/0", "/1"]
    assert {r.json()["digest"]["count"] for r in webhook_receiver.requests} == {50}


def test_more_than_the_threshold_inside_a_window_become_one_digest(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook)
    deliver(clock)
    rows = []
    for _ in range(6):
        clock.advance(4)
        rows.append(queue_notification(hook))
        assert deliver(clock) == 0

    clock.advance(6)
    assert deliver(clock) == 1

    body = webhook_receiver.requests[1].json()
    assert body["event"] == "digest"
    assert body["digest"]["of"] == "incident.opened"
    assert body["digest"]["count"] == 6
    names = [item["project"]["name"] for item in body["digest"]["events"]]
    assert names == [row.payload["project"]["name"] for row in rows]
    digest = Notification.objects.get(event="digest")
    assert digest.state == Notification.State.DELIVERED
    assert webhook_receiver.requests[1].headers["webhook-id"] == digest.key
    for row in rows:
        row.refresh_from_db()
        assert row.state == Notification.State.DIGESTED
        assert row.digest_id == digest.pk


def test_a_sustained_storm_sends_one_message_per_window(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(100):  # one a second for 100 s
        queue_notification(hook)
        deliver(clock)
        clock.advance(1)
    clock.advance(30)
    deliver(clock)

    # At 0 s alone, then a digest as each window closes (30, 60, 90 s, with
    # the event of the closing second) and the last one after the storm.
    assert webhook_receiver.events() == ["incident.opened"] + ["digest"] * 4
    counts = [r.json()["digest"]["count"] for r in webhook_receiver.requests[1:]]
    assert counts == [30, 30, 30, 9]


def test_recoveries_are_grouped_apart_from_outages(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook, "incident.opened")
    queue_notification(hook, "incident.resolved")
    deliver(clock)
    for _ in range(6):
        queue_notification(hook, "incident.opened")
        queue_notification(hook, "incident.resolved")

    clock.advance(30)
    deliver(clock)

    events = webhook_receiver.events()
    assert sorted(events[:2]) == ["incident.opened", "incident.resolved"]
    kinds = sorted(r.json()["digest"]["of"] for r in webhook_receiver.requests[2:])
    assert kinds == ["incident.opened", "incident.resolved"]


def test_other_events_are_never_grouped_or_delayed(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(7):
        queue_notification(hook, "incident.reminder")

    deliver(clock)

    assert webhook_receiver.events() == ["incident.reminder"] * 7


def test_a_failed_digest_is_retried_as_one_message(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(503)
    for _ in range(6):
        queue_notification(hook)
    deliver(clock)

    clock.advance(60)
    deliver(clock)

    assert webhook_receiver.events() == ["digest", "digest"]
    assert len({r.headers["webhook-id"] for r in webhook_receiver.requests}) == 1
    assert Notification.objects.filter(event="digest").count() == 1


def test_of_two_deliverers_one_releases_a_window(hook, queue_notification, clock):
    queue_notification(hook)
    (window,) = digests.windows(clock.now(), CONFIG)

    first = digests.release(window, CONFIG, clock.now())
    second = digests.release(window, CONFIG, clock.now())

    assert len(first) == 1
    assert second == []


def test_a_held_opening_is_never_released(hook, queue_notification, clock):
    queue_notification(hook, state=Notification.State.HELD)

    assert digests.windows(clock.now(), CONFIG) == []
    assert deliver(clock) == 0


def test_no_window_sends_every_event_at_once_and_never_a_digest(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(7):
        queue_notification(hook)

    deliver_due(now=clock.now, config=DeliveryConfig(digest_seconds=0))

    assert webhook_receiver.events() == ["incident.opened"] * 7


def rows(*seconds: float) -> list[Waiting]:
    from tests.support.outcomes import T0

    return [Waiting(n, T0 + timedelta(seconds=s)) for n, s in enumerate(seconds)]


@pytest.mark.parametrize(
    ("waiting", "last_release", "sent", "as_digest"),
    [
        # quiet: the oldest alone
        pytest.param(rows(0), None, 1, False, id="lone"),
        pytest.param(rows(0, 0, 1), None, 1, False, id="quiet, a few: first"),
        pytest.param(rows(*[0] * 6), None, 6, True, id="quiet, a storm: digest"),
        pytest.param(rows(0), -30, 1, False, id="last release long ago"),
        # held by the window of a release 10 s before the first
        pytest.param(rows(0, 5), -10, 2, False, id="held, a few: each"),
        pytest.param(rows(*[0] * 6), -10, 6, True, id="held, many: digest"),
    ],
)
def test_the_release_rule(waiting, last_release, sent, as_digest):
    from tests.support.outcomes import T0

    last = None if last_release is None else T0 + timedelta(seconds=last_release)

    released, digest = chosen(waiting, last, CONFIG)

    assert (len(released), digest) == (sent, as_digest)
    assert released == waiting[:sent]
