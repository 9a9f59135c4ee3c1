"""The control endpoint: a small JSON HTTP server inside runpoller.

    GET    /status                 the coordinator's status
    GET    /metrics                Prometheus text format
    POST   /projects/<id>/sync     follow one project as the database has it
    DELETE /projects/<id>          stop polling it
    POST   /reload                 full reload from the database
    POST   /scale                  {"max_concurrent_http": n}, 1..5000

Every request needs "Authorization: Bearer <token>". It runs in its own
threads and only calls Coordinator methods, so no request can stall polling.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import asdict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.db import DatabaseError

from polling import store
from polling.auth import token_matches
from polling.engine.config import MAX_CONCURRENT_LIMIT
from polling.engine.coordinator import Coordinator, NotRunning

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
MAX_CONCURRENT_REQUESTS = 16
# A client that sends nothing for this long is cut off.
SOCKET_TIMEOUT_SECONDS = 5

ROUTES = [
    ("GET", re.compile(r"/status"), "status"),
    ("GET", re.compile(r"/metrics"), "metrics"),
    ("POST", re.compile(r"/projects/(\d+)/sync"), "sync"),
    ("DELETE", re.compile(r"/projects/(\d+)"), "remove"),
    ("POST", re.compile(r"/reload"), "reload"),
    ("POST", re.compile(r"/scale"), "scale"),
]


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
        self._server = _Server(self._address, self._coordinator, self._token)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
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
            self._server = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, coordinator: Coordinator, token: str) -> None:
        self.coordinator = coordinator
        self.token = token
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_REQUESTS)
        super().__init__(address, _Handler)

    def process_request(self, request, client_address) -> None:
        # A flood of connections is turned away rather than given threads.
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()
            store.close_connection()

    def handle_error(self, request, client_address) -> None:
        logger.debug("Control request from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = SOCKET_TIMEOUT_SECONDS
    server_version = "uptime-monitor-poller"

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_GET

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
                    return action, tuple(int(group) for group in match.groups())
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

    # Actions: each returns (status, JSON-able payload or bytes).

    def _status(self, *, body: bytes):
        return HTTPStatus.OK, self.server.coordinator.status().to_json()

    def _metrics(self, *, body: bytes):
        return HTTPStatus.OK, self.server.coordinator.metrics_text()

    def _sync(self, project_id: int, *, body: bytes):
        result = self.server.coordinator.sync_project(project_id)
        return HTTPStatus.OK, {"project_id": project_id, "result": result}

    def _remove(self, project_id: int, *, body: bytes):
        removed = self.server.coordinator.remove_project(project_id)
        return HTTPStatus.OK, {"project_id": project_id, "removed": removed}

    def _reload(self, *, body: bytes):
        return HTTPStatus.OK, asdict(self.server.coordinator.reload_projects())

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
