"""One agent from start to stop: the order of the steps, written once.

The sender starts first (results left on disk by the last run go out at
once), then the first sync (retried until the server answers or a stop
is asked for), then the engine. At SIGTERM: the engine stops and saves
every result to the buffer, then the sender sends what the buffer holds
until POLLER_STOP_TIMEOUT; whatever is left stays on disk.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from django.conf import settings

from polling.agents.buffer import ResultBuffer
from polling.agents.client import AgentClient, AgentRevoked, ServerUnavailable
from polling.agents.sender import ResultSender
from polling.agents.source import BufferStore, ServerTargets
from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.transport import set_source_address
from polling.run.interpreter_lock import GIL_SWITCH_SECONDS
from polling.run.options import CannotRun
from polling.run.stop_signals import StopSignals

logger = logging.getLogger("polling")

FIRST_SYNC_MAX_WAIT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class AgentOptions:
    server: str
    token: str
    buffer_path: str
    max_concurrent: int | None = None
    status_interval: float = 30.0


def run_agent(options: AgentOptions, say: Callable[[str], None]) -> str:
    """Poll the region's projects until SIGTERM, a revoked token or
    SIGINT; returns the summary line. Raises CannotRun when it cannot
    start."""
    sys.setswitchinterval(GIL_SWITCH_SECONDS)  # as runpoller: see there
    with StopSignals() as stop:
        try:
            client = AgentClient(options.server, options.token)
        except AgentRevoked as error:
            raise CannotRun(str(error)) from None
        buffer = ResultBuffer(options.buffer_path, settings.AGENT_BUFFER_MAX_RESULTS)
        sender = ResultSender(buffer, client)
        sender.start()
        try:
            return _run(options, client, buffer, sender, stop, say)
        finally:
            left = sender.stop(time.monotonic() + settings.POLLER_STOP_TIMEOUT)
            say(f"Stopped with {left} results buffered on disk.")
            buffer.close()
            client.close()


def _run(options, client, buffer, sender, stop: threading.Event, say) -> str:
    report = partial_report(buffer)
    first = _first_sync(client, report, stop)
    if first is None:
        return "Stopped before the server answered."
    config = _config(options, first["config"])
    source = ServerTargets(client, report, first, on_revoked=stop.set)
    coordinator = Coordinator(
        config, source=source, store=BufferStore(buffer, sender.nudge)
    )
    coordinator.start()
    say(
        f"Agent started in region {config.region}: "
        + ("polling its projects." if source.active else "standing by.")
    )
    next_status = time.monotonic() + config.status_log_seconds
    try:
        # Short waits: a revoked token (seen by the sync or the sender)
        # stops the agent within a second.
        while not stop.wait(0.5):
            if sender.revoked.is_set():
                break
            if time.monotonic() >= next_status:
                logger.info("%s; %s", coordinator.status().line(), _buffered(buffer))
                next_status += config.status_log_seconds
        say("Stopping: finishing polls in flight, buffering results.")
    finally:
        coordinator.stop(config.stop_timeout)
    status = coordinator.status()
    return f"Stopped. {status.line()}; {_buffered(buffer)}"


def partial_report(buffer: ResultBuffer) -> Callable[[], dict]:
    version = _version()
    host = socket.gethostname()

    def report() -> dict:
        oldest = buffer.oldest_started_at()
        return {
            "version": version,
            "host": host,
            "buffered_results": buffer.size(),
            "buffered_oldest_at": oldest and oldest.isoformat(),
        }

    return report


def _first_sync(client, report, stop: threading.Event) -> dict | None:
    wait = 0.5
    while not stop.is_set():
        try:
            return client.sync(None, report())
        except ServerUnavailable as error:
            logger.warning("Waiting for the server: %s", error)
        except AgentRevoked as error:
            raise CannotRun(f"The server refused this agent's token: {error}") from None
        stop.wait(wait)
        wait = min(wait * 2, FIRST_SYNC_MAX_WAIT_SECONDS)
    return None


def _config(options: AgentOptions, server: dict) -> PollerConfig:
    """The engine's knobs: this machine's limits from its own settings,
    the region's phase and the blocked networks from the server's."""
    set_source_address(settings.POLLER_SOURCE_ADDRESS)
    return PollerConfig(
        max_concurrent_http=options.max_concurrent or settings.MAX_CONCURRENT_HTTP,
        reload_interval=settings.AGENT_SYNC_SECONDS,
        task_queue_size=settings.POLLER_TASK_QUEUE_SIZE,
        result_queue_size=settings.POLLER_RESULT_QUEUE_SIZE,
        recheck_seconds=settings.POLLER_RECHECK_SECONDS,
        stop_timeout=settings.POLLER_STOP_TIMEOUT,
        status_log_seconds=options.status_interval,
        region=str(server["region"]),
        phase_fraction=float(server["phase_fraction"]),
        phase_spread_seconds=float(server["phase_spread_seconds"]),
        blocked_networks=tuple(server["blocked_networks"]),
        # As runpoller: the targets are the working set, not garbage.
        freeze_after_load=True,
    )


def _buffered(buffer: ResultBuffer) -> str:
    oldest = buffer.oldest_started_at()
    age = "" if oldest is None else f", oldest from {oldest:%H:%M:%S} UTC"
    return f"{buffer.size()} results buffered{age}"


def _version() -> str:
    try:
        return metadata.version("uptime-monitor")
    except metadata.PackageNotFoundError:
        return ""
