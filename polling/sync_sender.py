"""Tell the pollers about changed projects from a thread of the web process.

A web request that saves a project hands its ids over and returns: it never
waits for a poller (one call per live poller, up to a second each when one
hangs). The thread sends whatever has gathered since its last call in one
call, waiting LINGER_SECONDS after a change for others of the same burst,
so a burst of saves costs the pollers a few calls, not one each (a call's
fixed cost, on both sides, was most of a poller's work per project created
through the API), and a change still reaches them well within a second.

What is lost if the process dies before the thread has sent it is repaired
by the pollers' periodic reload, exactly like a call that failed; at a
normal exit the ids still waiting are sent first (atexit).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterable

from django.db import connection

logger = logging.getLogger(__name__)

# How long a normal exit waits for the last ids to go out.
EXIT_FLUSH_SECONDS = 2.0
# How long the thread keeps its database connection with nothing to send.
IDLE_SECONDS = 5.0
# How long a change waits for others to go out with it (flush() cuts it short).
LINGER_SECONDS = 0.1


class SyncSender:
    """`send(ids)` runs on a thread of its own, with every id submitted
    since its previous run. The thread starts on the first submit (so
    nothing starts at import or in a process that forked before)."""

    def __init__(
        self,
        send: Callable[[list[int]], object],
        *,
        linger_seconds: float = LINGER_SECONDS,
    ) -> None:
        self._send = send
        self._linger_seconds = linger_seconds
        self._flushing = 0  # flush() calls waiting: no lingering for them
        self._pending: set[int] = set()
        self._pending_since = 0.0  # when the oldest id waiting came
        self._submitted = 0  # submits so far
        self._done = 0  # submits whose ids have been sent
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._exit_hook = False

    def submit(self, project_ids: Iterable[int]) -> None:
        ids = set(project_ids)
        if not ids:
            return
        with self._changed:
            if not self._pending:
                self._pending_since = time.monotonic()
            self._pending |= ids
            self._submitted += 1
            self._ensure_thread()
            self._changed.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything submitted so far has been sent; False if
        `timeout` passed first. For a normal exit, and for tests."""
        with self._changed:
            wanted = self._submitted
            self._flushing += 1
            self._changed.notify_all()
            try:
                return self._changed.wait_for(lambda: self._done >= wanted, timeout)
            finally:
                self._flushing -= 1

    def _ensure_thread(self) -> None:
        # A forked child has the object but not the thread: start its own.
        if self._thread is not None and self._thread.is_alive():
            return
        # Not "poller-…": that prefix names a poller's own threads, which
        # the poller tests require gone after a stop.
        self._thread = threading.Thread(
            target=self._run, name="web-sync-to-pollers", daemon=True
        )
        self._thread.start()
        if not self._exit_hook:
            atexit.register(self.flush, EXIT_FLUSH_SECONDS)
            self._exit_hook = True

    def _run(self) -> None:
        while True:
            ids, taken = self._take()
            try:
                self._send(ids)
            except Exception:
                logger.exception("Telling pollers of %d projects failed", len(ids))
            finally:
                # Kept for the next call of a burst (CONN_MAX_AGE), not after
                # an error: a new session per call cost the database a
                # backend's start for every project saved.
                connection.close_if_unusable_or_obsolete()
            with self._changed:
                self._done = taken
                self._changed.notify_all()

    def _take(self) -> tuple[list[int], int]:
        """The ids waiting and the submits they cover, once there are some.
        The thread's own connection (the live pollers' lookup) is closed
        after IDLE_SECONDS without any: not kept open between bursts."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._pending, IDLE_SECONDS):
                connection.close()
                self._changed.wait_for(lambda: self._pending)
            # The rest of the burst joins in meanwhile (the lock is free);
            # ids that came during the previous call have lingered already.
            left = self._pending_since + self._linger_seconds - time.monotonic()
            if left > 0:
                self._changed.wait_for(lambda: self._flushing, left)
            ids, self._pending = sorted(self._pending), set()
            return ids, self._submitted
