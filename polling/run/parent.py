"""runpoller --processes N: N pollers as children of this process."""

from __future__ import annotations

import os

from django.conf import settings

from polling.children import ChildPollers, run_children
from polling.run.options import CannotRun, RunOptions
from polling.run.stop_signals import SignalsToForward
from polling.wiring import shares_projects


def run_parent(processes: int, options: RunOptions) -> str:
    """Run `processes` pollers, each with these options, and wait for them
    (signals are forwarded to them). A signal before they start (during
    Django's set-up: manage.py notes it) starts none."""
    with SignalsToForward() as signals:
        if processes < 1:
            raise CannotRun("--processes must be at least 1.")
        if not shares_projects():
            raise CannotRun(
                "--processes needs PostgreSQL: on SQLite only one poller may "
                "run (DATABASE_URL=postgres://...)."
            )
        if signals.received:
            return "Stopped before starting any poller."
        env = dict(os.environ)
        children = ChildPollers(processes, options.as_arguments(), env=env)
        status = run_children(children, settings.POLLER_CONTROL_BIND, signals)
    if status:
        raise CannotRun(f"A poller exited with status {status}.")
    return f"Stopped {processes} pollers."
