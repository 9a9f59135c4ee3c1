"""This runpoller process's PollerNode row, kept fresh from its own thread,
so the tasks process can tell when no poller is running (the watcher is
watched: projects/incidents/watcher.py)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import datetime
from importlib import metadata

from django.db import DatabaseError
from django.utils import timezone

from polling.engine.threads import named_thread
from polling.store import close_connection
from projects.models import PollerNode, Region

logger = logging.getLogger(__name__)

# Well under POLLER_SILENT_SECONDS (default 120), so a slow beat or two is
# never taken for silence.
BEAT_SECONDS = 10.0


class NodeCheckIn:
    """Writes this process's PollerNode row at start(), then every
    `interval` seconds while `alive()` holds, and marks it stopped at
    stop()."""

    def __init__(
        self,
        *,
        control_url: str = "",
        region_id: int = 1,
        alive: Callable[[], bool] = lambda: True,
        interval: float = BEAT_SECONDS,
        clock: Callable[[], datetime] = timezone.now,
    ) -> None:
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.name = f"{self.host}:{self.pid}"
        self._control_url = control_url
        self.region_id = region_id
        self._alive = alive
        self._interval = interval
        self._clock = clock
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.node_id: int | None = None  # once registered

    def start(self) -> None:
        """Register this process (raises if the database is unreachable),
        then beat from a thread."""
        self.register(self._clock())
        thread = named_thread(self._run, name="poller-check-in")
        thread.start()  # RuntimeError when no thread can be started
        self._thread = thread  # only a started thread is joined at stop()

    def register(self, now: datetime) -> None:
        """Write this process's row afresh, as started `now`."""
        node, _ = PollerNode.objects.update_or_create(
            name=self.name,
            defaults={
                "host": self.host,
                "pid": self.pid,
                "control_url": self._control_url,
                "version": _version(),
                "started_at": now,
                "last_seen_at": now,
                "stopped_at": None,
                "region_id": self.region_id,
            },
        )
        self.node_id = node.pk
        _seen(self.region_id, now)

    def beat(self) -> bool:
        """Record that this poller is alive now. Returns False (and writes
        nothing) while `alive()` says it is not."""
        if not self._alive():
            return False
        now = self._clock()
        if not PollerNode.objects.filter(name=self.name).update(last_seen_at=now):
            self.register(now)  # the row was removed meanwhile
        else:
            _seen(self.region_id, now)
        return True

    def stop(self, timeout: float | None = None) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.node_id is None:
            return  # never registered
        with contextlib.suppress(DatabaseError):
            PollerNode.objects.filter(name=self.name).update(stopped_at=self._clock())

    def _run(self) -> None:
        try:
            while not self._stopping.wait(self._interval):
                try:
                    self.beat()
                except Exception:
                    logger.exception("Check-in failed; the next one may succeed")
                    close_connection()
        finally:
            close_connection()


def _seen(region_id: int, now: datetime) -> None:
    """The region has a live poller: this one (docs/regions.md)."""
    Region.objects.filter(pk=region_id).update(last_seen_at=now)


def _version() -> str:
    try:
        return metadata.version("uptime-monitor")
    except metadata.PackageNotFoundError:
        return ""
