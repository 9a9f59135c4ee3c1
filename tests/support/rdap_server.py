"""A real RDAP service on 127.0.0.1 for the domain expiry tests.

    with RdapServer() as rdap:
        rdap.register("example.co.uk", expires="2027-01-02T03:04:05Z")
        settings.RDAP_BOOTSTRAP_URL = rdap.bootstrap_url
        ...
        assert rdap.asked("example.co.uk") == 1

It serves the IANA-style bootstrap file at /bootstrap.json, mapping every
TLD of the domains registered (and any given to `tlds`) to itself, and
RFC 9083 domain objects at /domain/<name>. A domain never registered
gets a 404; `answer_raw()` makes a domain's answer any bytes (malformed
JSON), `hang()` makes it never answer. Every request is counted by path.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = object()


class RdapServer:
    def __init__(self, *, tlds: tuple[str, ...] = ()) -> None:
        self.tlds = set(tlds)
        self.requests: Counter[str] = Counter()
        self.stopping = threading.Event()
        self._answers: dict[str, object] = {}
        self._delegated: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RdapServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> RdapServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving and closes the port (a later request is refused)."""
        if self._server is None:
            return
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._server = None

    @property
    def base_url(self) -> str:
        host, port = self._address
        return f"http://{host}:{port}/"

    @property
    def bootstrap_url(self) -> str:
        return self.base_url + "bootstrap.json"

    def register(
        self,
        domain: str,
        *,
        expires: str | None,
        registrar: str = "Example Registrar, Inc.",
        status: tuple[str, ...] = ("client transfer prohibited",),
    ) -> None:
        """Answer for `domain` with this expiry (None: no expiration event)."""
        events = [{"eventAction": "registration", "eventDate": "2001-01-01T00:00:00Z"}]
        if expires is not None:
            events.append({"eventAction": "expiration", "eventDate": expires})
        document = {
            "objectClassName": "domain",
            "ldhName": domain.upper(),
            "status": list(status),
            "events": events,
            "entities": [
                {
                    "objectClassName": "entity",
                    "roles": ["registrar"],
                    "vcardArray": ["vcard", [["fn", {}, "text", registrar]]],
                }
            ],
        }
        self.answer_raw(domain, json.dumps(document).encode())

    def answer_raw(self, domain: str, body: bytes) -> None:
        with self._lock:
            self._answers[domain] = body
            self.tlds.add(domain.rpartition(".")[2])

    def hang(self, domain: str) -> None:
        """Never answer for `domain` (until stop())."""
        with self._lock:
            self._answers[domain] = HANG
            self.tlds.add(domain.rpartition(".")[2])

    def delegate(self, tld: str, base_url: str) -> None:
        """Name another service (another RdapServer's base_url) for `tld`
        in the bootstrap file."""
        with self._lock:
            self._delegated[tld] = base_url

    def asked(self, domain: str) -> int:
        """How many requests for `domain` came in."""
        with self._lock:
            return self.requests[f"/domain/{domain}"]

    @property
    def _address(self) -> tuple[str, int]:
        return self._server.server_address[:2]

    def _bootstrap(self) -> bytes:
        with self._lock:
            services = [[[tld], [self.base_url]] for tld in sorted(self.tlds)]
            services += [[[tld], [url]] for tld, url in self._delegated.items()]
        return json.dumps({"version": "1.0", "services": services}).encode()

    def _answer(self, path: str) -> object:
        with self._lock:
            self.requests[path] += 1
            if path == "/bootstrap.json":
                return None
            return self._answers.get(path.removeprefix("/domain/"))


def _handler(server: RdapServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer = server._answer(self.path)
            if self.path == "/bootstrap.json":
                self._send(200, server._bootstrap())
            elif answer is HANG:
                server.stopping.wait()
            elif answer is None:
                self._send(404, b'{"errorCode": 404, "title": "Not Found"}')
            else:
                self._send(200, answer)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/rdap+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args) -> None:
            pass  # the tests read the counters, not a log

    return Handler
