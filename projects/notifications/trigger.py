"""The "deliver soon" trigger: asks the tasks process for a delivery run
now rather than at its next sweep.

Whatever queues outbox rows calls it after commit (the outbox, reminders,
escalation). It only enqueues a task by name, so it needs nothing of the
delivery code, and the delivery code nothing of it.
"""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger(__name__)

DELIVER_TASK = "projects.notifications.tasks.deliver_notifications"
# New rows ask for a run at most this often per process.
REQUEST_INTERVAL = 1.0

_last_request = float("-inf")
_request_lock = threading.Lock()


def request_delivery() -> None:
    """Asks the tasks process for a delivery run soon; cheap, and at most
    once a second per process (call it after commit)."""
    global _last_request
    with _request_lock:
        if time.monotonic() - _last_request < REQUEST_INTERVAL:
            return
        _last_request = time.monotonic()
    from django_q.tasks import async_task

    try:
        async_task(DELIVER_TASK, task_name="deliver notifications")
    except Exception:
        # The sweeper delivers within a minute anyway; never fail the caller.
        logger.exception("could not ask the tasks process for a delivery run")
