"""gunicorn's threaded worker, with a deadline on reading each request.

gthread parks idle connections in its poller, which costs no thread. But
once a client has sent a first byte, a thread reads the rest with blocking
reads and no time limit: a client that trickles its headers a byte at a
time holds that thread as long as it likes, and as many such clients as
there are threads stop the site, pings included (heartbeat projects then go
down falsely). Here each request has HEADER_SECONDS to arrive; once its
headers are in, the body and the view get gunicorn's --timeout. A watchdog
thread shuts down the socket of a request past its deadline, which ends the
blocked read and frees the thread.

The Procfile runs it: `--worker-class monitor.gunicorn_worker.DeadlineThreadWorker`.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from gunicorn.workers.gthread import ThreadWorker

# Longer than gthread's own 5 s wait for a first byte, after which an idle
# connection is parked in the poller rather than cut off.
HEADER_SECONDS = 6.0
WATCH_EVERY_SECONDS = 0.5


class DeadlineThreadWorker(ThreadWorker):
    def init_process(self) -> None:
        self._deadlines: dict[object, float] = {}
        self._deadlines_lock = threading.Lock()
        self._watching = threading.Event()
        watchdog = threading.Thread(
            target=self._watch, name="request-deadlines", daemon=True
        )
        watchdog.start()
        super().init_process()

    def handle(self, conn):
        self._set_deadline(conn, HEADER_SECONDS)
        try:
            return super().handle(conn)
        finally:
            with self._deadlines_lock:
                self._deadlines.pop(conn, None)

    def handle_request(self, req, conn):
        # The headers are in: the body and the view get the request timeout.
        self._set_deadline(conn, self.cfg.timeout)
        return super().handle_request(req, conn)

    def _set_deadline(self, conn, seconds: float) -> None:
        with self._deadlines_lock:
            self._deadlines[conn] = time.monotonic() + seconds

    def _watch(self) -> None:
        while not self._watching.wait(WATCH_EVERY_SECONDS):
            for conn in self._expired(time.monotonic()):
                # OSError: the client has closed it already.
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)

    def _expired(self, now: float) -> list:
        with self._deadlines_lock:
            expired = [c for c, deadline in self._deadlines.items() if deadline < now]
            for conn in expired:
                del self._deadlines[conn]
        return expired
