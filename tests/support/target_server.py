"""A real HTTP server on 127.0.0.1 that answers well or badly, for tests.

    with TargetServer() as server:
        probe(client, task_for(server.url("/status/503")))
        assert server.count("/status") == 1

Routes (any method; HEAD gets headers only):

    /, /ok                  200
    /status/<code>          that status, with a tiny body (none for 204/304)
    /switch                 the status the test sets in `switch_status`
                            (200 until then): a site that goes down and up
    /by-source              the status the test sets for the client's
                            address in `status_by_source` (200 if none;
                            0: hang up with a reset): a site reached
                            differently from different places (regions)
    /delay/<ms>             waits, then 200
    /drip/<seconds>         headers at once, then one body byte a second
    /drip-headers/<seconds> the response header bytes, one a second
    /hang                   reads the request and never answers
    /garbage                bytes that are not HTTP, then closes
    /reset                  closes with a TCP RST (SO_LINGER 0), no answer
    /close                  closes without writing anything
    /big/<bytes>            200 with that many body bytes, streamed
    /redirect/<n>           302 to /redirect/<n-1>; /redirect/0 is 200
    /redirect-loop          302 to itself
    /redirect-to?location=  302 (or &status=) to the given location
    /echo                   200 with JSON: method, path, headers, body
    /text?body=&type=&status=&header=  that body (UTF-8), Content-Type
                            and status (defaults: empty, text/plain, 200),
                            and each header=Name:value given as a header
    /repeat?text=&times=&type=&before=&after=  200 with `text` (UTF-8)
                            `times` times over, between `before` and `after`
                            (default: nothing), and that Content-Type: a
                            big or deep body

Request bodies are read by Content-Length. Every request is recorded
before it is answered, so /hang and /reset show up in `requests` too.
stop() returns promptly even with /hang, /delay or /drip in progress: it
wakes their waits and shuts down every open connection.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import socketserver
import ssl
import struct
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CHUNK = bytes(64 * 1024)
NO_BODY_STATUSES = {204, 304}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str  # as sent, with the query string
    headers: tuple[tuple[str, str], ...]  # in order, names as sent
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header, looked up case-insensitively."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


class TargetServer:
    """Serve the routes above on 127.0.0.1, on a free port, in threads."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context
        self.switch_status = 200
        self.status_by_source: dict[str, int] = {}
        self.sources: dict[str, int] = {}  # requests of /by-source per client
        self.stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> TargetServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> TargetServer:
        self._server = _Server(self)
        if self.ssl_context:
            # The handshake happens on the first read, in the handler
            # thread, so a client that never shakes hands cannot block
            # accept().
            self._server.socket = self.ssl_context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"target-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and end every connection; safe to call twice."""
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

    def url(self, path: str = "/") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def count(self, path_prefix: str | None = None) -> int:
        """How many requests came in, optionally only those under a path."""
        return sum(
            1
            for request in self.requests
            if path_prefix is None or request.path.startswith(path_prefix)
        )

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 overflows when a poller opens
    # dozens of connections at once on a loaded machine: the client's SYN
    # is dropped and retried a second later, and a poll can time out
    # without the request ever being recorded.
    request_queue_size = 1024

    def __init__(self, target: TargetServer) -> None:
        self.target = target
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind would look up the host name, which can be
        # slow; the name is known.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]

    def process_request(self, request, client_address) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            daemon=True,
        )
        with self._connections_lock:
            self._connections[request] = thread
        thread.start()

    def shutdown_request(self, request) -> None:
        with self._connections_lock:
            self._connections.pop(request, None)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Unblock every handler stuck reading, then wait for it to end."""
        with self._connections_lock:
            connections = dict(self._connections)
        for connection in connections:
            # The plain socket method: SSLSocket.shutdown would tear down
            # its TLS object under a handler thread that is still reading.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(connection, socket.SHUT_RDWR)
        for thread in connections.values():
            thread.join(timeout=5)

    def handle_error(self, request, client_address) -> None:
        # Clients hang up on drips and big bodies; that is the point.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body
    # waits for the client's delayed ACK and every response takes 40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format, *args) -> None:
        pass

    def dispatch(self) -> None:
        self.recorded = RecordedRequest(
            self.command, self.path, tuple(self.headers.items()), self._read_body()
        )
        self.server.target.record(self.recorded)
        path = urlsplit(self.path).path
        for pattern, handler in ROUTES:
            match = pattern.fullmatch(path)
            if match:
                handler(self, *match.groups())
                return
        self._send(404, b"no such route\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = dispatch

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers=()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status not in NO_BODY_STATUSES:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in NO_BODY_STATUSES:
            self.wfile.write(body)

    def _wait(self, seconds: float) -> bool:
        """Sleep, unless the server stops first; say whether it slept."""
        if self.server.target.stopping.wait(seconds):
            self.close_connection = True
            return False
        return True

    def _hang_up(self, *, reset: bool) -> None:
        if reset:
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        # The buffered reader holds a reference that would delay the close.
        self.rfile.close()
        self.connection.close()
        self.close_connection = True

    # Routes -----------------------------------------------------------------

    def route_ok(self) -> None:
        self._send(200, b"ok\n")

    def route_status(self, code: str) -> None:
        self._send(int(code), f"status {code}\n".encode())

    def route_switch(self) -> None:
        status = self.server.target.switch_status
        self._send(status, f"status {status}\n".encode())

    def route_by_source(self) -> None:
        target, source = self.server.target, self.client_address[0]
        with target._lock:
            target.sources[source] = target.sources.get(source, 0) + 1
        status = target.status_by_source.get(source, 200)
        if status == 0:
            self._hang_up(reset=True)
            return
        self._send(status, f"status {status} for {source}\n".encode())

    def route_delay(self, milliseconds: str) -> None:
        if self._wait(int(milliseconds) / 1000):
            self.route_ok()

    def route_drip(self, seconds: str) -> None:
        self.send_response(200)
        self.send_header("Content-Length", seconds)
        self.end_headers()
        for _ in range(int(seconds)):
            if not self._wait(1):
                return
            self.wfile.write(b".")

    def route_drip_headers(self, seconds: str) -> None:
        count = int(seconds)
        head = (
            f"HTTP/1.1 200 OK\r\nX-Drip: {'.' * count}\r\n"
            "Content-Length: 3\r\nConnection: close\r\n\r\nok\n"
        ).encode()
        self.close_connection = True
        for index in range(count):
            self.wfile.write(head[index : index + 1])
            if not self._wait(1):
                return
        self.wfile.write(head[count:])

    def route_hang(self) -> None:
        self.server.target.stopping.wait()
        self.close_connection = True

    def route_garbage(self) -> None:
        self.wfile.write(b"THIS IS NOT HTTP\r\n\r\n")
        self._hang_up(reset=False)

    def route_reset(self) -> None:
        self._hang_up(reset=True)

    def route_close(self) -> None:
        self._hang_up(reset=False)

    def route_big(self, size: str) -> None:
        left = int(size)
        self.send_response(200)
        self.send_header("Content-Length", size)
        self.end_headers()
        if self.command == "HEAD":
            return
        chunk = memoryview(CHUNK)
        while left > 0 and not self.server.target.stopping.is_set():
            piece = chunk[: min(left, len(chunk))]
            self.wfile.write(piece)
            left -= len(piece)

    def route_redirect(self, hops: str) -> None:
        if hops == "0":
            self.route_ok()
        else:
            self._send(302, b"", [("Location", f"/redirect/{int(hops) - 1}")])

    def route_redirect_loop(self) -> None:
        self._send(302, b"", [("Location", "/redirect-loop")])

    def route_redirect_to(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        status = int(query.get("status", ["302"])[0])
        self._send(status, b"", [("Location", query["location"][0])])

    def route_text(self) -> None:
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        body = query.get("body", [""])[0].encode()
        content_type = query.get("type", ["text/plain; charset=utf-8"])[0]
        status = int(query.get("status", ["200"])[0])
        extra = [tuple(item.split(":", 1)) for item in query.get("header", [])]
        self._send(status, body, [("Content-Type", content_type), *extra])

    def route_repeat(self) -> None:
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        body = query["text"][0].encode() * int(query["times"][0])
        body = query.get("before", [""])[0].encode() + body
        body += query.get("after", [""])[0].encode()
        self._send(200, body, [("Content-Type", query["type"][0])])

    def route_echo(self) -> None:
        request = self.recorded
        body = json.dumps(
            {
                "method": request.method,
                "path": request.path,
                "headers": request.headers,
                "body": request.body.decode("utf-8", "replace"),
            }
        )
        self._send(200, body.encode(), [("Content-Type", "application/json")])


ROUTES = [
    (re.compile(pattern), handler)
    for pattern, handler in [
        (r"/|/ok", _Handler.route_ok),
        (r"/status/(\d{3})", _Handler.route_status),
        (r"/switch", _Handler.route_switch),
        (r"/by-source", _Handler.route_by_source),
        (r"/delay/(\d+)", _Handler.route_delay),
        (r"/drip/(\d+)", _Handler.route_drip),
        (r"/drip-headers/(\d+)", _Handler.route_drip_headers),
        (r"/hang", _Handler.route_hang),
        (r"/garbage", _Handler.route_garbage),
        (r"/reset", _Handler.route_reset),
        (r"/close", _Handler.route_close),
        (r"/big/(\d+)", _Handler.route_big),
        (r"/redirect/(\d+)", _Handler.route_redirect),
        (r"/redirect-loop", _Handler.route_redirect_loop),
        (r"/redirect-to", _Handler.route_redirect_to),
        (r"/echo", _Handler.route_echo),
        (r"/text", _Handler.route_text),
        (r"/repeat", _Handler.route_repeat),
    ]
]
