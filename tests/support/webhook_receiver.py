"""A real webhook receiver on 127.0.0.1 for tests and benchmarks.

    with WebhookReceiver() as receiver:
        receiver.answer(500, 500)          # the next two requests get 500
        ...
        assert [r.status for r in receiver.requests] == [500, 500, 200]

Every POST is recorded (headers, body, the status it got) before it is
answered. `answer()` scripts the next answers: a status code, a
(status, headers) pair, or HANG to never answer; after the script, every
request gets `default_status` after `delay` seconds. stop() returns
promptly even while requests hang.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = object()


@dataclass(frozen=True, slots=True)
class Received:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    status: int | None  # None: never answered

    def json(self) -> dict:
        return json.loads(self.body)


class WebhookReceiver:
    def __init__(self, *, default_status: int = 200, delay: float = 0) -> None:
        self.default_status = default_status
        self.delay = delay
        self.stopping = threading.Event()
        self._script: deque = deque()
        self._received: list[Received] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> WebhookReceiver:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="webhook-receiver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        self._thread.join()
        self._server = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, *answers) -> None:
        """Script the next answers, in order."""
        with self._lock:
            self._script.extend(answers)

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    def events(self) -> list[str]:
        """The `event` of every JSON body received, in order."""
        return [r.json().get("event", "") for r in self.requests]

    def next_answer(self):
        with self._lock:
            return self._script.popleft() if self._script else None

    def record(self, received: Received) -> None:
        with self._lock:
            self._received.append(received)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, receiver: WebhookReceiver) -> None:
        self.receiver = receiver
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        self.socket.bind(self.server_address)
        self.server_address = self.socket.getsockname()

    def process_request(self, request, client_address) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address) -> None:
        pass  # clients that time out hang up; that is the point


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format, *args) -> None:
        pass

    def do_POST(self) -> None:
        receiver = self.server.receiver
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = receiver.next_answer()
        status, headers = self._status_and_headers(answer)
        headers_seen = {name.lower(): value for name, value in self.headers.items()}
        receiver.record(Received(self.path, headers_seen, body, status))
        if answer is HANG:
            receiver.stopping.wait()
            self.close_connection = True
            return
        if answer is None and receiver.delay and receiver.stopping.wait(receiver.delay):
            self.close_connection = True
            return
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _status_and_headers(self, answer) -> tuple[int | None, dict]:
        if answer is HANG:
            return None, {}
        if answer is None:
            return self.server.receiver.default_status, {}
        if isinstance(answer, tuple):
            return answer
        return answer, {}
