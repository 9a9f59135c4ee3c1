"""Small real servers on 127.0.0.1 for the socket kinds' tests: an SSH
banner server, a server that resets each call, a UDP echo server, a UDP
server that never answers, a stand-in Redis that records what it is
told. Each binds port 0 and stops when its `with` block ends."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading


class BannerServer:
    """Accepts connections and writes `greeting` to each, then waits for
    the client to hang up (an SSH server waiting for the key exchange).
    `greeting` None: accept and say nothing."""

    def __init__(self, greeting: bytes | None = b"SSH-2.0-OpenSSH_9.2p1 Debian\r\n"):
        self.greeting = greeting
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._connections: list[socket.socket] = []
        self.accepted = 0

    def __enter__(self) -> BannerServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopping.set()
        self._thread.join(5)
        for connection in self._connections:
            connection.close()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            self._connections.append(connection)
            self._handle(connection)

    def _handle(self, connection: socket.socket) -> None:
        if self.greeting is not None:
            with contextlib.suppress(OSError):
                connection.sendall(self.greeting)


class ResettingServer(BannerServer):
    """Reads the first bytes of each connection (a client's opening, say
    the HTTP/2 preface) and resets it: a server that breaks off the call
    before any answer. Not at once on accepting: libcurl may take a reset
    that soon for a failed connect."""

    def __init__(self) -> None:
        super().__init__(greeting=None)

    def _handle(self, connection: socket.socket) -> None:
        connection.settimeout(5)
        with contextlib.suppress(OSError):
            connection.recv(16)
        linger_zero = struct.pack("ii", 1, 0)  # close() sends a reset
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger_zero)
        connection.close()


class UdpServer:
    """Answers each datagram with `answer(data)`; None: never answers
    (reads and drops, like a service that is up but mute)."""

    def __init__(self, answer=lambda data: b"echo: " + data, *, family=socket.AF_INET):
        self.answer = answer
        host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
        self._sock = socket.socket(family, socket.SOCK_DGRAM)
        self._sock.bind((host, 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.received: list[bytes] = []

    def __enter__(self) -> UdpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopping.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                data, peer = self._sock.recvfrom(65535)
            except TimeoutError:
                continue
            self.received.append(data)
            reply = self.answer(data) if self.answer else None
            if reply is not None:
                self._sock.sendto(reply, peer)


def closed_udp_port() -> int:
    """A UDP port on 127.0.0.1 with nothing bound to it (just released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RecordingRedis:
    """A stand-in Redis on 127.0.0.1 that answers every command +PONG and
    keeps the bytes each connection sent: what a check says to a server."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.received = bytearray()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> RecordingRedis:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._listener.close()
        self._thread.join(5)

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            connection, _ = self._listener.accept()
            with connection:
                while chunk := connection.recv(4096):
                    self.received += chunk
                    # One answer per command (an array's "*" opens each).
                    connection.sendall(b"+PONG\r\n" * chunk.count(b"*"))
