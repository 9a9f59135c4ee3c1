"""A real WebSocket server on 127.0.0.1 (the websockets package), in a
thread: it echoes each text message as "echo: <text>", or says nothing
when `silent`; `tls` serves wss://."""

from __future__ import annotations

import ssl
import threading

from websockets.sync.server import serve


class WebSocketServer:
    def __init__(self, *, silent: bool = False, tls: ssl.SSLContext | None = None):
        self.silent = silent
        self.closed_politely = 0
        self._server = serve(self._handle, "127.0.0.1", 0, ssl=tls)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handle(self, connection) -> None:
        for message in connection:
            if not self.silent:
                connection.send(f"echo: {message}")
        if connection.close_code == 1000:
            self.closed_politely += 1

    def __enter__(self) -> WebSocketServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._thread.join(5)
