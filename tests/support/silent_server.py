"""A TCP server on 127.0.0.1 that accepts every connection and never
says a word: a database, cache or gRPC server that hangs."""

from __future__ import annotations

import contextlib
import socket
import threading


class SilentServer:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._accepted = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def accepted(self) -> int:
        """Connections accepted so far."""
        with self._lock:
            return self._accepted

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(5)
        with self._lock:
            for sock in self._held:
                sock.close()
            self._held.clear()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._held.append(sock)
                self._accepted += 1
