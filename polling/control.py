"""The control endpoint: a small JSON HTTP server inside runpoller.

    GET    /status                 the coordinator's status
    GET    /metrics                Prometheus text format
    POST   /projects/<id>/sync     follow one project as the database has it
    POST   /projects/sync          {"ids": [...]}: the same for each, in one call
    DELETE /projects/<id>          stop polling it
    POST   /reload                 full reload from the database
    POST   /scale                  {"max_concurrent_http": n}, 1..5000

Every request needs "Authorization: Bearer <token>". It runs in its own
threads and only calls Coordinator methods, so no request can stall polling.

Slow and idle clients cannot lock it out: each connection has
SOCKET_TIMEOUT_SECONDS in all to send its request, however it drips it,
and when every slot is taken a new connection cuts off the one that has
spent longest sending its request.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

from django.db import DatabaseError

from polling import store
from polling.auth import token_matches
from polling.engine.config import MAX_CONCURRENT_LIMIT
from polling.engine.coordinator import Coordinator, NotRunning
from polling.engine.threads import named_thread

logger = logging.getLogger(__name__)
T = TypeVar("T")

MAX_BODY_BYTES = 16 * 1024
MAX_CONCURRENT_REQUESTS = 16
# Threads (and database connections) for the requests that read the database.
DATABASE_THREADS = 4
# A client that has not sent its whole request this long after it
# connected is cut off.
SOCKET_TIMEOUT_SECONDS = 5
# How long a new connection waits for the slot of one it cut off.
ROOM_WAIT_SECONDS = 1.0
# The shortest token served beyond loopback: guessing 32 characters of
# even a lowercase hexadecimal token is out of reach.
MIN_REMOTE_TOKEN_LENGTH = 32
# Project ids are 64-bit; a longer one cannot name a project.
MAX_PROJECT_ID = 2**63 - 1

ROUTES = [
    ("GET", re.compile(r"/status"), "status"),
    ("GET", re.compile(r"/metrics"), "metrics"),
    ("POST", re.compile(r"/projects/(\d+)/sync"), "sync"),
    ("POST", re.compile(r"/projects/sync"), "sync_many"),
    ("DELETE", re.compile(r"/projects/(\d+)"), "remove"),
    ("POST", re.compile(r"/reload"), "reload"),
    ("POST", re.compile(r"/scale"), "scale"),
]


class WeakControlToken(ValueError):
    """The control endpoint would listen beyond loopback with a token too
    short to hold off guessing."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(host: str, token: str) -> None:
    """Raises WeakControlToken when `token` is too short for `host`."""
    if is_loopback(host) or len(token) >= MIN_REMOTE_TOKEN_LENGTH:
        return
    raise WeakControlToken(
        f"Refusing to serve the control endpoint on {host}, which is not a "
        f"loopback address, with a token of {len(token)} characters. Set "
        f"POLLER_CONTROL_TOKEN to at least {MIN_REMOTE_TOKEN_LENGTH} random "
        'characters (python -c "import secrets; print(secrets.token_hex(32))"), '
        "or bind to 127.0.0.1."
    )


class RequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class ControlServer:
    def __init__(self, coordinator: Coordinator, *, host: str, port: int, token: str):
        self._coordinator = coordinator
        self._address = (host, port)
        self._token = token
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> None:
        """Bind and serve. Raises WeakControlToken before binding beyond
        loopback with a short token, OSError when the address is taken."""
        check_token(self._address[0], self._token)
        self._server = _Server(self._address, self._coordinator, self._token)
        self._thread = named_thread(
            self._server.serve_forever,
            kwargs={"poll_interval": 0.5},
            name="poller-control",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server.close_database()
            self._server = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, coordinator: Coordinator, token: str) -> None:
        self.coordinator = coordinator
        self.token = token
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_REQUESTS)
        # Connections still sending their request: since when.
        self._reading: dict[socket.socket, float] = {}
        self._reading_lock = threading.Lock()
        # The actions that read the database run on threads of their own,
        # which keep their connections (CONN_MAX_AGE): one per request cost
        # the database a backend's start for every project saved. Several,
        # so that a long reload does not hold the syncs up.
        self._database = ThreadPoolExecutor(
            DATABASE_THREADS, thread_name_prefix="poller-control-db"
        )
        super().__init__(address, _Handler)

    def in_database_thread(self, call: Callable[..., T], *args) -> T:
        return self._database.submit(_keeping_connection, call, *args).result()

    def close_database(self) -> None:
        """Close the threads' connections, and end the threads."""
        closes = [
            self._database.submit(_close_when_all_there, barrier)
            for barrier in [threading.Barrier(DATABASE_THREADS)]
            for _ in range(DATABASE_THREADS)
        ]
        for close in closes:
            close.result()
        self._database.shutdown()

    def process_request(self, request, client_address) -> None:
        # A flood of connections is turned away rather than given threads.
        if not self._slots.acquire(blocking=False) and not self._make_room():
            self.shutdown_request(request)
            return
        with self._reading_lock:
            self._reading[request] = time.monotonic()
        super().process_request(request, client_address)

    def request_read(self, request: socket.socket) -> None:
        """The connection has sent its request: it is no longer idle."""
        with self._reading_lock:
            self._reading.pop(request, None)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.request_read(request)
            self._slots.release()
            store.close_connection()

    def _make_room(self) -> bool:
        """Cut off the connection that has spent longest sending its
        request (idle ones, so that they cannot lock the endpoint out) and
        take its slot. False when every slot serves a request."""
        with self._reading_lock:
            if not self._reading:
                return False
            oldest = min(self._reading, key=self._reading.__getitem__)
            del self._reading[oldest]
        # Its thread's read ends at once, and it gives its slot back.
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)
        return self._slots.acquire(timeout=ROOM_WAIT_SECONDS)

    def handle_error(self, request, client_address) -> None:
        logger.debug("Control request from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = SOCKET_TIMEOUT_SECONDS
    server_version = "uptime-monitor-poller"

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_GET

    def setup(self) -> None:
        super().setup()
        # One deadline for the whole request, not one per read: a client
        # that sends a byte a second never waits out a per-read timeout.
        self.rfile.close()
        deadline = time.monotonic() + self.timeout
        self.rfile = io.BufferedReader(_ReadBefore(self.connection, deadline))

    def log_message(self, format: str, *args) -> None:
        logger.debug("control: " + format, *args)

    def send_error(self, code: int, message: str | None = None, explain=None) -> None:
        """Malformed requests get JSON too, not the default HTML page."""
        self.close_connection = True
        self._send_json(code, {"error": message or HTTPStatus(code).phrase})

    def _dispatch(self) -> None:
        try:
            if not token_matches(self.headers.get("Authorization"), self.server.token):
                raise RequestError(
                    HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token"
                )
            action, args = self._route()
            body = self._read_body()
            self._request_read()
            status, payload = getattr(self, f"_{action}")(*args, body=body)
        except RequestError as error:
            status, payload = error.status, {"error": str(error)}
        except NotRunning as error:
            status, payload = HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(error)}
        except DatabaseError as error:
            logger.warning(
                "Control request %s %s: database error: %s",
                self.command,
                self.path,
                error,
            )
            status, payload = (
                HTTPStatus.SERVICE_UNAVAILABLE,
                {"error": "database unavailable"},
            )
        except Exception:
            logger.exception("Control request %s %s failed", self.command, self.path)
            status, payload = (
                HTTPStatus.INTERNAL_SERVER_ERROR,
                {"error": "internal error"},
            )
        if isinstance(payload, bytes):
            self._send(status, payload, "text/plain; version=0.0.4; charset=utf-8")
        else:
            self._send_json(status, payload)

    def _route(self) -> tuple[str, tuple[int, ...]]:
        path = self.path.split("?", 1)[0]
        allowed = []
        for method, pattern, action in ROUTES:
            match = pattern.fullmatch(path)
            if match:
                if method == self.command:
                    return action, tuple(_project_id(g) for g in match.groups())
                allowed.append(method)
        if allowed:
            raise RequestError(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"{self.command} is not allowed here; use {', '.join(allowed)}",
            )
        raise RequestError(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}")

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
        if length < 0:
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            raise RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body may be at most {MAX_BODY_BYTES} bytes",
            )
        return self.rfile.read(length) if length else b""

    def _request_read(self) -> None:
        self.server.request_read(self.connection)
        self.connection.settimeout(self.timeout)  # for writing the answer

    # Actions: each returns (status, JSON-able payload or bytes).

    def _status(self, *, body: bytes):
        return HTTPStatus.OK, self.server.coordinator.status().to_json()

    def _metrics(self, *, body: bytes):
        return HTTPStatus.OK, self.server.coordinator.metrics_text()

    def _sync(self, project_id: int, *, body: bytes):
        result = self.server.in_database_thread(
            self.server.coordinator.sync_project, project_id
        )
        return HTTPStatus.OK, {"project_id": project_id, "result": result}

    def _sync_many(self, *, body: bytes):
        ids = _parse_ids(body)
        coordinator = self.server.coordinator
        results = self.server.in_database_thread(coordinator.sync_projects, ids)
        return HTTPStatus.OK, {"results": {str(pk): r for pk, r in results.items()}}

    def _remove(self, project_id: int, *, body: bytes):
        removed = self.server.coordinator.remove_project(project_id)
        return HTTPStatus.OK, {"project_id": project_id, "removed": removed}

    def _reload(self, *, body: bytes):
        coordinator = self.server.coordinator
        summary = self.server.in_database_thread(coordinator.reload_projects)
        return HTTPStatus.OK, asdict(summary)

    def _scale(self, *, body: bytes):
        limit = _parse_scale(body)
        self.server.coordinator.scale_to(limit)
        return HTTPStatus.OK, {"max_concurrent_http": limit}

    # Writing responses

    def _send_json(self, status: int, payload: dict) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == HTTPStatus.UNAUTHORIZED:
            self.send_header("WWW-Authenticate", 'Bearer realm="poller"')
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _close_when_all_there(barrier: threading.Barrier) -> None:
    """One per thread: each waits for the others, so that every thread
    closes its own connection (one still busy after ROOM_WAIT_SECONDS keeps
    its connection until the process ends)."""
    with contextlib.suppress(threading.BrokenBarrierError):
        barrier.wait(timeout=ROOM_WAIT_SECONDS)
    store.close_connection()


def _keeping_connection(call: Callable[..., T], *args) -> T:
    try:
        return call(*args)
    finally:
        store.release_connection()


class _ReadBefore(io.RawIOBase):
    """A socket's reading side that gives up at a deadline: each read waits
    only for what is left of it."""

    def __init__(self, connection: socket.socket, deadline: float) -> None:
        self._connection = connection
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        self._connection.settimeout(left)
        return self._connection.recv_into(buffer)


def _project_id(digits: str) -> int:
    # int() refuses more than 4,300 digits; the database, more than 64 bits.
    if len(digits) > len(str(MAX_PROJECT_ID)) or int(digits) > MAX_PROJECT_ID:
        raise RequestError(HTTPStatus.BAD_REQUEST, "no project has so large an id")
    return int(digits)


def _parse_scale(body: bytes) -> int:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be JSON") from None
    limit = data.get("max_concurrent_http") if isinstance(data, dict) else None
    if type(limit) is not int or not 1 <= limit <= MAX_CONCURRENT_LIMIT:
        raise RequestError(
            HTTPStatus.BAD_REQUEST,
            'send {"max_concurrent_http": n} with a whole number n '
            f"from 1 to {MAX_CONCURRENT_LIMIT}",
        )
    return limit


def _parse_ids(body: bytes) -> list[int]:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be JSON") from None
    ids = data.get("ids") if isinstance(data, dict) else None
    if not isinstance(ids, list) or not all(
        type(i) is int and 0 < i <= MAX_PROJECT_ID for i in ids
    ):
        raise RequestError(
            HTTPStatus.BAD_REQUEST, 'send {"ids": [...]} with project ids'
        )
    return list(dict.fromkeys(ids))
