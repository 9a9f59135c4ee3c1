"""The pieces of one poller, built and started with every failure turned
into one clear line (CannotRun)."""

from __future__ import annotations

import logging
import socket

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from polling.auth import control_token
from polling.control import (
    ControlServer,
    WeakControlToken,
    check_token,
    is_loopback,
)
from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.types import RunState
from polling.leases import LeaseKeeper
from polling.node import NodeHeartbeat
from polling.regions import region_id
from polling.run.options import CannotRun
from polling.sqlite_lock import PollerAlreadyRunning, SinglePollerLock, lock_for
from polling.system_checks import parse_bind
from polling.wiring import database_coordinator, shared_coordinator, shares_projects

logger = logging.getLogger("polling")


def single_poller_lock() -> SinglePollerLock | None:
    """On SQLite, hold the database's poller lock, or refuse to start."""
    lock = lock_for(connection.settings_dict)
    if lock is not None:
        try:
            lock.acquire()
        except PollerAlreadyRunning as error:
            raise CannotRun(str(error)) from None
    return lock


def coordinator_for(config: PollerConfig) -> tuple[Coordinator, LeaseKeeper | None]:
    """On PostgreSQL, a poller sharing the projects with the others
    through shard leases (registered first: the leases name it); on
    SQLite, the only one."""
    if not shares_projects():
        return database_coordinator(config), None
    try:
        node = NodeHeartbeat(region_id=region_id())
        node.register(timezone.now())
    except DatabaseError as error:
        raise CannotRun(f"Cannot register this poller: {error}") from error
    return shared_coordinator(config, node_id=node.node_id)


def control_server(coordinator: Coordinator) -> ControlServer:
    """The control endpoint (not yet listening); refused beyond loopback
    without a token of its own."""
    host, port = parse_bind(settings.POLLER_CONTROL_BIND)
    if not is_loopback(host) and not settings.POLLER_CONTROL_TOKEN:
        raise CannotRun(
            f"Refusing to serve the control endpoint on {host}, which is not a "
            "loopback address, with a token derived from SECRET_KEY. Set "
            "POLLER_CONTROL_TOKEN explicitly, or bind to 127.0.0.1."
        )
    token = control_token()
    try:
        check_token(host, token)
    except WeakControlToken as error:
        raise CannotRun(str(error)) from None
    return ControlServer(coordinator, host=host, port=port, token=token)


def start(coordinator: Coordinator, control: ControlServer | None) -> None:
    """Bind the control endpoint first (a taken port fails before anything
    runs), then start the poller."""
    if control is not None:
        try:
            control.start()
        except OSError as error:
            raise CannotRun(
                f"Cannot serve the control endpoint on "
                f"{settings.POLLER_CONTROL_BIND}: {error}. Is another poller "
                "running? (--no-control turns it off.)"
            ) from error
        logger.info("Control endpoint on port %d", control.port)
    try:
        coordinator.start()
    except DatabaseError as error:
        raise CannotRun(f"Cannot load projects from the database: {error}") from error
    except RuntimeError as error:
        raise CannotRun(
            f"Cannot start the poller: {error}. Lower MAX_CONCURRENT_HTTP, or "
            "raise this process's limits on threads and memory."
        ) from error


def heartbeat(coordinator: Coordinator, control: ControlServer | None) -> NodeHeartbeat:
    """This process's PollerNode row, beating while the poller runs."""
    url = control_url(settings.POLLER_CONTROL_BIND, control.port) if control else ""
    return NodeHeartbeat(
        control_url=url,
        region_id=region_id(),
        alive=lambda: coordinator.state is RunState.RUNNING,
    )


def control_url(bind: str, port: int) -> str:
    """Where other processes reach this poller's control endpoint: a
    wildcard bind is named by this host's name."""
    host, _ = parse_bind(bind)
    if host in ("", "0.0.0.0", "::"):
        host = socket.getfqdn()
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def hand_over(keeper: LeaseKeeper) -> None:
    """Once every result is saved: give the leases back, so the other
    pollers take over at their next tick instead of after the TTL."""
    keeper.stop()
    try:
        keeper.release_all()
    except DatabaseError as error:
        logger.warning("Could not release the shard leases: %s", error)
