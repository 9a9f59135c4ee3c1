"""One poller from start to stop: the order of the steps, written once."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable

from polling.engine.pinger import icmp_mode
from polling.engine.status import PollerStatus
from polling.run import parts
from polling.run.interpreter_lock import GIL_SWITCH_SECONDS
from polling.run.options import CannotRun, RunOptions
from polling.run.stop_signals import StopSignals
from polling.wiring import config_from_settings

logger = logging.getLogger("polling")


def run_poller(options: RunOptions, say: Callable[[str], None]) -> str:
    """Poll until SIGTERM or SIGINT, save every result, and return the
    summary line; `say` writes a line for the operator. Raises CannotRun
    when the poller cannot start or results were left unsaved."""
    # The handlers come first: a signal after this point, however early in
    # start-up, is a clean stop that releases the lock and what started.
    with StopSignals() as stop:
        lock = parts.single_poller_lock()
        try:
            status = _poll_until(stop, options, say)
        finally:
            if lock:
                lock.release()
    return summary(status, say)


def _poll_until(
    stop: threading.Event, options: RunOptions, say: Callable[[str], None]
) -> PollerStatus:
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    config = config_from_settings(
        max_concurrent_http=options.max_concurrent,
        reload_interval=options.reload_interval,
        status_log_seconds=options.status_interval,
        freeze_after_load=True,
    )
    coordinator, keeper = parts.coordinator_for(config)
    control = None if options.no_control else parts.control_server(coordinator)
    check_in = None
    try:
        if not stop.is_set():  # asked to stop before anything started
            parts.start(coordinator, control)
            say(f"{icmp_mode()}.")
            check_in = parts.check_in(coordinator, control)
            parts.start_checking_in(check_in, keeper)
        while not stop.wait(config.status_log_seconds):
            logger.info(coordinator.status().line())
        say("Stopping: finishing polls in flight, saving results.")
    finally:
        # Also after an error: threads left running would keep the process
        # alive with nobody watching them.
        stop_every_part(
            control and control.stop,
            lambda: coordinator.stop(config.stop_timeout),
            keeper and (lambda: parts.hand_over(keeper)),
            check_in and check_in.stop,
        )
    return coordinator.status()


def stop_every_part(*steps: Callable[[], object] | None) -> None:
    """Run each step in turn, the later ones even if one fails (a part
    left running keeps the process alive); then raise the first failure."""
    failures = []
    for step in steps:
        if step is None:
            continue
        try:
            step()
        except Exception as error:
            logger.exception("A part of the poller failed to stop")
            failures.append(error)
    if failures:
        raise failures[0]


def summary(status: PollerStatus, say: Callable[[str], None]) -> str:
    """Say the final status as one JSON line (for tools); return it in
    words. CannotRun when results could not be saved in time."""
    say(json.dumps({"event": "stopped", **status.to_json()}))
    if status.results_unsaved:
        raise CannotRun(
            f"Stopped with {status.results_unsaved} results unsaved: the "
            "database could not be reached in time."
        )
    return (
        f"Stopped. {status.line()}; "
        f"{status.dropped_at_stop} queued polls were not started"
    )
