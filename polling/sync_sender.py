"""Tell the pollers about changed projects from a thread of the web process.

A web request that saves a project hands its ids over and returns: it never
waits for a poller (one call per live poller, up to a second each when one
hangs). The thread sends whatever has gathered since its last call in one
call, waiting LINGER_SECONDS after a change for others of the same burst,
so a burst of saves costs the pollers a few calls, not one each (a call's
fixed cost, on both sides, was most of a poller's work per project created
through the API), and a change still reaches them well within a second.

A call that no poller, or not every live one, heard (one starting and too
busy to answer within the client's second, one restarting, a network
error) is made again for its ids after 1, 2, 4, 8 and 16 s
(POLLER_SYNC_RETRIES), and then left to the pollers' periodic reload
(POLLER_RELOAD_INTERVAL, 5 minutes), as is what is lost if the process
dies before the thread has sent it; at a normal exit the ids still
waiting are sent first (atexit), their retries not.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# How long a normal exit waits for the last ids to go out.
EXIT_FLUSH_SECONDS = 2.0
# How long the thread keeps its database connection with nothing to send.
IDLE_SECONDS = 5.0
# How long a change waits for others to go out with it (flush() cuts it short).
LINGER_SECONDS = 0.1
# The wait before the first retry of ids a call did not deliver; it doubles
# at each retry after: a poller's start takes seconds, not minutes.
FIRST_RETRY_SECONDS = 1.0


class SyncSender:
    """`send(ids)` runs on a thread of its own, with every id submitted
    since its previous run. The thread starts on the first submit (so
    nothing starts at import or in a process that forked before). When
    `send` returns False or raises, its ids are sent again later, up to
    `retries` times (None: settings.POLLER_SYNC_RETRIES)."""

    def __init__(
        self,
        send: Callable[[list[int]], bool | None],
        *,
        linger_seconds: float = LINGER_SECONDS,
        retries: int | None = None,
        first_retry_seconds: float = FIRST_RETRY_SECONDS,
    ) -> None:
        self._send = send
        self._linger_seconds = linger_seconds
        self._retries = retries
        self._first_retry_seconds = first_retry_seconds
        self._failed_calls: dict[int, int] = {}  # id -> failed calls in a row
        self._retry_at: dict[int, float] = {}  # id -> when it is sent again
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
            for project_id in ids:  # goes out now: not again later as well
                self._retry_at.pop(project_id, None)
            self._submitted += 1
            self._ensure_thread()
            self._changed.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything submitted so far has been sent once (its
        retries, if any, are not waited for); False if `timeout` passed
        first. For a normal exit, and for tests."""
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

    @property
    def retries_waiting(self) -> int:
        """Ids waiting to be sent again."""
        with self._changed:
            return len(self._retry_at)

    def _run(self) -> None:
        while True:
            ids, taken = self._take()
            delivered = False
            try:
                delivered = self._send(ids) is not False
            except Exception:
                logger.exception("Telling pollers of %d projects failed", len(ids))
            finally:
                # Kept for the next call of a burst (CONN_MAX_AGE), not after
                # an error: a new session per call cost the database a
                # backend's start for every project saved.
                connection.close_if_unusable_or_obsolete()
            with self._changed:
                self._note_call(ids, delivered)
                self._done = taken
                self._changed.notify_all()

    def _note_call(self, ids: list[int], delivered: bool) -> None:
        """After a call: forget its ids, or set when each goes out again.
        The caller holds the lock."""
        if delivered:
            for project_id in ids:
                self._failed_calls.pop(project_id, None)
            return
        retries = (
            settings.POLLER_SYNC_RETRIES if self._retries is None else self._retries
        )
        now, given_up = time.monotonic(), 0
        for project_id in ids:
            failed = self._failed_calls.get(project_id, 0) + 1
            if failed > retries:
                self._failed_calls.pop(project_id, None)
                given_up += failed > 1  # retried: not when retries are off
                continue
            self._failed_calls[project_id] = failed
            wait = self._first_retry_seconds * 2 ** (failed - 1)
            self._retry_at[project_id] = now + wait
        if given_up:
            logger.warning(
                "The pollers did not hear of %d projects after %d tries; "
                "their periodic reload (POLLER_RELOAD_INTERVAL) will",
                given_up,
                retries + 1,
            )

    def _take(self) -> tuple[list[int], int]:
        """The ids waiting (submitted, or due to be sent again) and the
        submits they cover, once there are some. The thread's own
        connection (the live pollers' lookup) is closed after IDLE_SECONDS
        without any: not kept open between bursts."""
        with self._changed:
            idle_until = time.monotonic() + IDLE_SECONDS
            while not self._pending_or_due():
                now = time.monotonic()
                if idle_until is not None and now >= idle_until:
                    connection.close()
                    idle_until = None
                wakes = [
                    *([idle_until] if idle_until else []),
                    *self._retry_at.values(),
                ]
                self._changed.wait(max(min(wakes) - now, 0) if wakes else None)
            # The rest of the burst joins in meanwhile (the lock is free);
            # ids that came during the previous call have lingered already.
            left = self._pending_since + self._linger_seconds - time.monotonic()
            if left > 0:
                self._changed.wait_for(lambda: self._flushing, left)
            self._pending_or_due()  # retries come due while lingering go too
            ids, self._pending = sorted(self._pending), set()
            return ids, self._submitted

    def _pending_or_due(self) -> bool:
        """Whether there are ids to send, once the retries due are among
        them. The caller holds the lock."""
        now = time.monotonic()
        due = [pk for pk, at in self._retry_at.items() if at <= now]
        if due and not self._pending:
            self._pending_since = now
        for project_id in due:
            del self._retry_at[project_id]
            self._pending.add(project_id)
        return bool(self._pending)
