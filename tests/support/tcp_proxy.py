"""A TCP proxy on 127.0.0.1 that a test can take down and bring back, to
give processes a database outage without touching the shared server.

While down, every open connection is cut and every new one is reset as
soon as it is accepted, as a restarting PostgreSQL would refuse it: the
client fails at once instead of waiting for a timeout.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

CHUNK = 65536


class TcpProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._up = True
        self._closed = False
        self.cut_connections = 0  # connections open when it went down
        self.refused = 0  # connections reset while down
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._closed = True
        self.down()
        # Wakes accept(): the listener's own close would not.
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        self._thread.join(5)
        self._listener.close()

    def down(self) -> None:
        """Cut every open connection; reset new ones until up()."""
        with self._lock:
            self._up = False
            cut, self._open = self._open, set()
        for sock in cut:
            _close(sock)
        self.cut_connections += len(cut) // 2

    def up(self) -> None:
        with self._lock:
            self._up = True

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                up = self._up and not self._closed
            if not up:
                self.refused += 1
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(
                    target=self._pump, args=(source, sink), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(CHUNK):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open -= {source, sink}
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    # shutdown() first: it wakes the pump blocked in recv() on this socket.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def _reset(sock: socket.socket) -> None:
    """Close with a RST rather than a FIN: the client's connect fails."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
