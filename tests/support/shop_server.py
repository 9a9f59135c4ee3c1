"""A real shop API on 127.0.0.1 that issues and checks tokens, for the
flow tests:

    POST /api/login   {"user": ..., "password": ...}: 200 {"token": ...}
                      with the right password, else 401, echoing the
                      password it got (a careless API: what it answers
                      may hold the secret a flow sent)
    GET  /api/orders  Authorization: Bearer <token>: 200 {"orders": [...]}
                      for a live token; 401 {"error": "token expired"} for
                      an expired one, 401 {"error": "no token"} otherwise

`tokens_expire = True` makes the tokens it issues expired at once: a
login that works and an order call that is refused. Every request's
path, headers and body are kept in `requests`.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ShopServer:
    def __init__(self, password: str) -> None:
        self.password = password
        self.tokens_expire = False
        self.tokens: dict[str, bool] = {}  # token -> expired
        self.requests: list[tuple[str, dict, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ShopServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def login(self, body: dict) -> tuple[int, dict]:
        if body.get("user") != "probe" or body.get("password") != self.password:
            return 401, {
                "error": "wrong user or password",
                "got": body.get("password"),
            }
        token = secrets.token_hex(16)
        self.tokens[token] = self.tokens_expire
        return 200, {"token": token}

    def orders(self, authorization: str) -> tuple[int, dict]:
        token = authorization.removeprefix("Bearer ")
        if token not in self.tokens:
            return 401, {"error": "no token"}
        if self.tokens[token]:
            return 401, {"error": "token expired"}
        return 200, {"orders": [{"id": 17, "total": 42.5}]}


def _handler(shop: ShopServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            shop.requests.append((self.path, dict(self.headers), body))
            if self.command == "POST" and self.path == "/api/login":
                try:
                    status, answer = shop.login(json.loads(body or "{}"))
                except ValueError:
                    status, answer = 400, {"error": "not JSON"}
            elif self.path.startswith("/api/orders"):
                status, answer = shop.orders(self.headers.get("Authorization", ""))
            else:
                status, answer = 404, {"error": "not found"}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Request-Id", secrets.token_hex(4))
            self.end_headers()
            self.wfile.write(data)

    return Handler
