"""The domain job as the tasks process runs it (projects/schedules.py):
hourly, so a new domain or a failed lookup waits an hour at most, while
each domain is still asked about once a day (lookups.py)."""

from __future__ import annotations

import logging
import threading
import time

from django_q.tasks import async_task

from django.utils import timezone

from projects.domains.warnings import warn_of_domains
from projects.domains.watched import watchers
from projects.housekeeping.tasks import run_deadline

logger = logging.getLogger(__name__)

TASK = f"{__name__}.check_domains"
# Saves ask for a run at most this often per process.
REQUEST_INTERVAL = 10.0

_last_request = float("-inf")
_request_lock = threading.Lock()


def check_domains() -> str:
    """Look up the domains due, then open and resolve the warnings. A run
    that stopped at its deadline with domains still due queues the next
    one at once."""
    # Here, not at the top: saving a project imports this module (its
    # receiver asks for a lookup), and the poller and the tasks process
    # start without httpx (tests/monitor/test_process_imports.py).
    from projects.domains.lookups import keep_rows_for, look_up_due

    now = timezone.now()
    keep_rows_for({w.domain for w in watchers() if w.domain}, now)
    looked_up = look_up_due(now=now, deadline=run_deadline())
    warned = warn_of_domains()
    if not looked_up.finished:
        async_task(TASK, task_name="check domains")
    return f"{looked_up}; {warned}"


def request_lookup() -> None:
    """Ask the tasks process for a run soon, for a domain no run has seen
    yet (call it after commit): its date then shows within seconds, not at
    the next hourly run. The lookup itself never runs in the caller."""
    global _last_request
    with _request_lock:
        if time.monotonic() - _last_request < REQUEST_INTERVAL:
            return
        _last_request = time.monotonic()
    try:
        async_task(TASK, task_name="check domains")
    except Exception:
        # The hourly run looks it up anyway; never fail the save.
        logger.exception("could not ask the tasks process for a domain lookup")
