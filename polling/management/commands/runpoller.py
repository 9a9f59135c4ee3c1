from __future__ import annotations

import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection
from django.utils import timezone

from polling.auth import control_token
from polling.checks import parse_bind
from polling.children import ChildPollers, run_children
from polling.control import ControlServer
from polling.engine.coordinator import Coordinator
from polling.engine.status import PollerStatus
from polling.engine.types import RunState
from polling.leases import LeaseKeeper
from polling.node import NodeHeartbeat
from polling.sqlite_lock import PollerAlreadyRunning, SinglePollerLock, lock_for
from polling.wiring import (
    config_from_settings,
    database_coordinator,
    shared_coordinator,
    shares_projects,
)

logger = logging.getLogger("polling")

# A worker thread drives up to 50 polls and hands the interpreter lock back
# several times a poll (epoll, libcurl calls). While another thread runs
# Python without a pause (a reload of 300,000 projects takes seconds),
# each time it wants the lock back it waits up to the switch interval: at
# CPython's default 5 ms, about 100 µs a time measured here, and polling
# fell to a fraction of its pace for the reload's length. 0.5 ms makes
# that wait about ten times shorter.
GIL_SWITCH_SECONDS = 0.0005


class Command(BaseCommand):
    help = "Poll every enabled project at its interval and save every result."

    def add_arguments(self, parser):
        parser.add_argument(
            "--max-concurrent", type=int, help="polls in flight at most"
        )
        parser.add_argument(
            "--reload-interval", type=float, help="seconds between full reloads"
        )
        parser.add_argument(
            "--log-level",
            choices=["DEBUG", "INFO", "WARNING", "ERROR"],
            type=str.upper,
            help="DEBUG logs every poll (default: LOG_LEVEL, or INFO)",
        )
        parser.add_argument(
            "--status-interval",
            type=float,
            help="seconds between status lines in the log (default 30)",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=1,
            help="start this many pollers under this process (PostgreSQL)",
        )
        parser.add_argument(
            "--no-control",
            action="store_true",
            help="do not serve the control endpoint",
        )

    def handle(
        self,
        *args,
        max_concurrent,
        reload_interval,
        status_interval,
        log_level,
        no_control,
        processes,
        **options,
    ):
        if log_level:
            logging.getLogger().setLevel(log_level)
        if processes != 1:
            return self._parent(
                processes,
                _child_args(
                    max_concurrent=max_concurrent,
                    reload_interval=reload_interval,
                    status_interval=status_interval,
                    log_level=log_level,
                    no_control=no_control,
                ),
            )
        lock = _single_poller_lock()
        try:
            return self._run(
                max_concurrent, reload_interval, status_interval, no_control
            )
        finally:
            if lock:
                lock.release()

    def _run(self, max_concurrent, reload_interval, status_interval, no_control):
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        config = config_from_settings(
            max_concurrent_http=max_concurrent,
            reload_interval=reload_interval,
            status_log_seconds=status_interval,
            freeze_after_load=True,
        )
        coordinator, keeper = _coordinator(config)
        control = None if no_control else _control_server(coordinator)
        stop = threading.Event()
        previous_handlers = _stop_on_signals(stop)
        heartbeat = None
        try:
            _start(coordinator, control)
            heartbeat = _heartbeat(coordinator, control)
            heartbeat.start()
            if keeper:
                keeper.start()
            while not stop.wait(config.status_log_seconds):
                logger.info(coordinator.status().line())
            self.stdout.write("Stopping: finishing polls in flight, saving results.")
        finally:
            # Also after an error: threads left running would keep the
            # process alive with nobody watching them.
            if control:
                control.stop()
            coordinator.stop(config.stop_timeout)
            if keeper:
                _hand_over(keeper)
            if heartbeat:
                heartbeat.stop()
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)
        return self._summary(coordinator.status())

    def _parent(self, processes: int, args: list[str]) -> str:
        """Run `processes` pollers as children and wait for them."""
        if processes < 1:
            raise CommandError("--processes must be at least 1.")
        if not shares_projects():
            raise CommandError(
                "--processes needs PostgreSQL: on SQLite only one poller may "
                "run (DATABASE_URL=postgres://...)."
            )
        children = ChildPollers(processes, args, env=dict(os.environ))
        status = run_children(children, settings.POLLER_CONTROL_BIND)
        if status:
            raise CommandError(f"A poller exited with status {status}.")
        return f"Stopped {processes} pollers."

    def _summary(self, status: PollerStatus) -> str:
        """The final status as one JSON line (for tools), then in words; an
        error when results could not be saved in time."""
        self.stdout.write(json.dumps({"event": "stopped", **status.to_json()}))
        if status.results_unsaved:
            raise CommandError(
                f"Stopped with {status.results_unsaved} results unsaved: the "
                "database could not be reached in time."
            )
        return (
            f"Stopped. {status.line()}; "
            f"{status.dropped_at_stop} queued polls were not started"
        )


def _child_args(**options) -> list[str]:
    """The options a child runpoller gets: the parent's own."""
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value not in (None, False):
            args += [flag, str(value)]
    return args


def _coordinator(config) -> tuple[Coordinator, LeaseKeeper | None]:
    """On PostgreSQL, a poller sharing the projects with the others
    through shard leases (registered first: the leases name it); on
    SQLite, the only one."""
    if not shares_projects():
        return database_coordinator(config), None
    node = NodeHeartbeat()
    try:
        node.register(timezone.now())
    except DatabaseError as error:
        raise CommandError(f"Cannot register this poller: {error}") from error
    return shared_coordinator(config, node_id=node.node_id)


def _hand_over(keeper: LeaseKeeper) -> None:
    """Once every result is saved: give the leases back, so the other
    pollers take over at their next tick instead of after the TTL."""
    keeper.stop()
    try:
        keeper.release_all()
    except DatabaseError as error:
        logger.warning("Could not release the shard leases: %s", error)


def _single_poller_lock() -> SinglePollerLock | None:
    """On SQLite, hold the database's poller lock, or refuse to start."""
    lock = lock_for(connection.settings_dict)
    if lock is not None:
        try:
            lock.acquire()
        except PollerAlreadyRunning as error:
            raise CommandError(str(error)) from None
    return lock


def _control_server(coordinator: Coordinator) -> ControlServer:
    host, port = parse_bind(settings.POLLER_CONTROL_BIND)
    if not _is_loopback(host) and not settings.POLLER_CONTROL_TOKEN:
        raise CommandError(
            f"Refusing to serve the control endpoint on {host}, which is not a "
            "loopback address, with a token derived from SECRET_KEY. Set "
            "POLLER_CONTROL_TOKEN explicitly, or bind to 127.0.0.1."
        )
    return ControlServer(coordinator, host=host, port=port, token=control_token())


def _start(coordinator: Coordinator, control: ControlServer | None) -> None:
    """Bind the control endpoint first (a taken port fails before anything
    runs), then start the poller; every failure is one clear line."""
    if control is not None:
        try:
            control.start()
        except OSError as error:
            raise CommandError(
                f"Cannot serve the control endpoint on "
                f"{settings.POLLER_CONTROL_BIND}: {error}. Is another poller "
                "running? (--no-control turns it off.)"
            ) from error
        logger.info("Control endpoint on port %d", control.port)
    try:
        coordinator.start()
    except DatabaseError as error:
        raise CommandError(
            f"Cannot load projects from the database: {error}"
        ) from error
    except RuntimeError as error:
        raise CommandError(
            f"Cannot start the poller: {error}. Lower MAX_CONCURRENT_HTTP, or "
            "raise this process's limits on threads and memory."
        ) from error


def _heartbeat(coordinator: Coordinator, control: ControlServer | None):
    """This process's PollerNode row, beating while the poller runs."""
    url = ""
    if control is not None:
        host, _ = parse_bind(settings.POLLER_CONTROL_BIND)
        if host in ("", "0.0.0.0", "::"):
            host = socket.getfqdn()
        url = f"http://{f'[{host}]' if ':' in host else host}:{control.port}"
    return NodeHeartbeat(
        control_url=url, alive=lambda: coordinator.state is RunState.RUNNING
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _stop_on_signals(stop: threading.Event) -> dict:
    """SIGTERM or SIGINT asks for a graceful stop; a second one exits at
    once. Returns the handlers it replaced."""

    def on_signal(signum, frame):
        if stop.is_set():
            os._exit(1)
        stop.set()

    return {
        signum: signal.signal(signum, on_signal)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
