"""Tasks for the tasks process (django-q2). Plain functions: tests call
them directly.

- `deliver_notifications`: sends what is due, then stays on while
  something falls due within its run (a retry, a digest window closing),
  unless another run has already promised to wake for it. Enqueued after
  new outbox rows are committed (projects.notifications.trigger) and run
  every minute by the sweeper schedule, which also picks up rows whose
  task was lost (a tasks process restarted, a broker that dropped a
  message).
- `queue_reminders`: see projects.notifications.reminders.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from projects.models import NotificationChannel
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import Wake, deliver_due, next_wake
from projects.notifications.reminders import queue_reminders  # noqa: F401
from projects.notifications.trigger import REQUEST_INTERVAL

logger = logging.getLogger(__name__)

# One run ends within this, so the workers stay free for other tasks and a
# SIGTERM of the tasks process is not held up for long.
RUN_SECONDS = 45
# A run stays at least this long, however little it finds: a row whose
# request was swallowed by the trigger's once-a-second limit was committed
# within this of the request that started this run, so this run finds it.
LINGER_SECONDS = REQUEST_INTERVAL
# While a run waits (for a window to close, a retry, its linger) it looks
# this often for new rows, so a lone alert never waits behind a sleeping
# run that holds a worker.
WATCH_SECONDS = 0.5
# The shortest pause between two steps, so a wake that is due but not this
# run's to serve (a full batch, a row another run holds) never spins.
MIN_PAUSE_SECONDS = 0.05


def deliver_notifications(
    *,
    now: Callable[[], datetime] = timezone.now,
    sleep: Callable[[float], object] = time.sleep,
    run_seconds: float = RUN_SECONDS,
) -> int:
    """Returns how many sends were attempted."""
    config = DeliveryConfig.from_settings()
    started = now()
    run_ends = started + timedelta(seconds=run_seconds)
    lingers_until = started + timedelta(seconds=LINGER_SECONDS)
    promised: set[Wake] = set()
    sent = 0
    while True:
        sent += deliver_due(now=now, config=config)
        current = now()
        wait = _wait_before_next(current, run_ends, config, promised)
        if wait is None and current < lingers_until:
            wait = (lingers_until - current).total_seconds()
        if wait is None:
            return sent
        sleep(min(max(wait, MIN_PAUSE_SECONDS), WATCH_SECONDS))


def _wait_before_next(current, run_ends, config, promised: set[Wake]) -> float | None:
    """Seconds until the next wake-up this run promises (or promised) to
    handle; None when the run ends (nothing due soon, or another run will
    wake)."""
    wake = next_wake(current, config)
    if wake is None or wake.at > run_ends:
        return None
    if wake.at > current and wake not in promised:
        if not promise_wakeup(wake, current):
            return None
        promised.add(wake)
    return max((wake.at - current).total_seconds(), 0)


def promise_wakeup(wake: Wake, now: datetime) -> bool:
    """Records on the channel that this run wakes for it at `wake.at`;
    False when another run already promised to wake for it by then."""
    updated = (
        NotificationChannel.objects.filter(pk=wake.channel_id)
        .filter(
            Q(deliverer_wakes_at__isnull=True)
            | Q(deliverer_wakes_at__lte=now)
            | Q(deliverer_wakes_at__gt=wake.at)
        )
        .update(deliverer_wakes_at=wake.at)
    )
    return updated == 1
