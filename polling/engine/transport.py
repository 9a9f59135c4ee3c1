"""One HTTP request and its response, on a long-lived libcurl handle.

A Transport belongs to one worker thread and keeps its connections, TLS
sessions and DNS answers from one poll to the next. libcurl does the whole
exchange in C with the GIL released, so a thread waiting on a slow server
costs the others nothing, and it reports how long each phase took.
"""

from __future__ import annotations

import select
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

import pycurl

from polling.engine.blocked import Network, SocketGuard, Taint
from polling.engine.tls_sessions import MAX_ORIGINS, SessionShares

USER_AGENT = "uptime-monitor/0.1"
MAX_BODY_BYTES = 1024 * 1024
# Certificates remembered per origin, for polls over a reused connection
# and for new handshakes within CERTIFICATE_REFRESH_SECONDS: as many as
# the origins whose TLS sessions are kept. Fewer made a poller that goes
# round more hosts read every certificate again, in a full handshake.
MAX_REMEMBERED_CERTIFICATES = MAX_ORIGINS
# How long a certificate read from a handshake is trusted for its expiry.
# Until then, new handshakes with that origin do not ask libcurl for the
# chain: reading it costs about a seventh of the handshake's CPU.
CERTIFICATE_REFRESH_SECONDS = 3600
# The most header lines kept of a response, for header assertions: a
# server cannot make a poll hold more.
MAX_KEPT_HEADERS = 200
_METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
# The key-exchange groups offered: OpenSSL's defaults less the post-quantum
# hybrid X25519MLKEM768. Offered, it brings a key share of its own to every
# ClientHello, which cost 8 % of a fresh handshake's CPU here, wasted on
# every server that does not choose it (all TLS 1.2 servers). X25519, first
# and alone, is the one share sent. The trade: no protection of recorded
# polls against a future quantum computer.
TLS_GROUPS = "X25519:P-256:X448:P-384:P-521:ffdhe2048:ffdhe3072"
# libcurl's INTERFACE for every handle of this process (e.g.
# "host!127.0.0.2"): pollers of several regions on one machine send from
# different addresses (POLLER_SOURCE_ADDRESS, docs/regions.md). Set once at
# start, before any handle is made; empty: the system chooses.
_source_address = ""


def set_source_address(address: str) -> None:
    global _source_address
    _source_address = address


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    verify_tls: bool = True
    keep_body: bool = False  # else the body is read and counted, not kept
    # Keep the final response's headers (for header assertions); else
    # libcurl reads them with no Python call per line.
    keep_headers: bool = False
    # May connect to POLL_BLOCKED_NETWORKS (its team is trusted).
    trusted: bool = False
    # HTTP/2 only: without TLS from the first byte (prior knowledge), with
    # TLS as ALPN agrees (gRPC); else libcurl's choice (HTTP/1.1 in the
    # clear, HTTP/2 over TLS when the server offers it).
    http2: bool = False


@dataclass(frozen=True, slots=True)
class Phases:
    """Microseconds spent resolving, connecting, shaking hands and waiting
    for the first byte; None for a phase that did not happen."""

    dns_us: int | None = None
    connect_us: int | None = None
    tls_us: int | None = None
    first_byte_us: int | None = None

    def __add__(self, other: Phases) -> Phases:
        return Phases(
            _add(self.dns_us, other.dns_us),
            _add(self.connect_us, other.connect_us),
            _add(self.tls_us, other.tls_us),
            _add(self.first_byte_us, other.first_byte_us),
        )

    def __iter__(self):
        return iter((self.dns_us, self.connect_us, self.tls_us, self.first_byte_us))


@dataclass(frozen=True, slots=True)
class Response:
    status_code: int
    location: str | None  # where a redirect points, made absolute
    phases: Phases
    tls_expires_at: datetime | None
    body: bytes = b""  # at most MAX_BODY_BYTES, when the request kept it
    truncated: bool = False  # the body went on past MAX_BODY_BYTES
    content_type: str | None = None
    # The final response's headers as (name, value), when the request
    # kept them.
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Connection:
    """A TCP connection that was accepted, then closed."""

    elapsed_us: int  # from the start, name lookup included
    phases: Phases


# Origin (host:port) -> its certificate's expiry, and when it was read.
Certificates = dict[str, tuple[datetime | None, float]]


class TransferError(Exception):
    """libcurl gave up on the exchange: `code` is its CURLE_* number."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        os_errno: int = 0,
        status_code: int | None = None,
        phases: Phases = Phases(),
        blocked: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        # The address refused for being in a blocked network, if that is why.
        self.blocked = blocked
        self.os_errno = os_errno
        self.status_code = status_code
        self.phases = phases


class Transport:
    """A libcurl easy handle set up for polling: no proxies from the
    environment, no .netrc, no cookies, http and https only, certificates
    checked against `ca_bundle`, redirects left to the caller.

    `resolve` takes libcurl's "host:port:address[,address...]" entries,
    answers used instead of DNS (tests point names at 127.0.0.1 with it).
    `sessions` keeps the TLS sessions and name lookups of each origin
    (tls_sessions.py); without it they are kept in the handle's own
    caches (the sessions of a few origins).
    """

    def __init__(
        self,
        *,
        ca_bundle: str,
        resolve: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        certificates: Certificates | None = None,
        blocked_networks: Sequence[Network] = (),
        taint: Taint | None = None,
        sessions: SessionShares | None = None,
        pingers: Any = None,
    ) -> None:
        self._curl = pycurl.Curl()
        # The ICMP sockets of the ping checks, one per family, shared by the
        # transports of one worker thread (pinger.Pingers; None: no pings).
        self.pingers = pingers
        self._blocked_networks = tuple(blocked_networks)
        self._guard = SocketGuard(self._blocked_networks, taint)
        self._clock = clock
        self._received = 0
        self._capped = False
        self._kept: list[bytes] | None = None
        self._header_lines: list[bytes] | None = None
        # Shared by the transports of one worker thread, which share their
        # connections too.
        self._certificates = {} if certificates is None else certificates
        self._origin: str | None = None  # of the request in hand, when https
        self._asking_certificate = False
        self.certificates_read = 0
        self._sessions = sessions
        self._share: pycurl.CurlShare | None = None
        self._http2 = False  # the handle is set for Request.http2
        self._resolve = list(resolve)
        self._ca_bundle = ca_bundle
        self._set_defaults(ca_bundle, self._resolve)
        self._guard.install(self._curl)

    @property
    def curl(self) -> pycurl.Curl:
        return self._curl

    @property
    def blocked_networks(self) -> tuple[Network, ...]:
        """Where untrusted polls may not connect; the kinds on the poller's
        own sockets check their addresses against it (blocked.py)."""
        return self._blocked_networks

    def perform(self, request: Request, *, timeout_ms: int) -> Response:
        """Send the request and read at most MAX_BODY_BYTES of the answer
        within `timeout_ms`; raises TransferError when that fails."""
        return perform(self.begin(request, timeout_ms=timeout_ms))

    def begin(self, request: Request, *, timeout_ms: int) -> Transport:
        """Set the handle up for the request. Run it with perform(), or
        on a CurlMulti, then call finish() with libcurl's result."""
        self._prepare(request, timeout_ms)
        return self

    def finish(self, code: int = 0, message: str = "") -> Response:
        """The answer to the request begun, once libcurl is done with it
        (`code` 0: no error); raises TransferError when it failed."""
        curl = self._curl
        if code and not (code == pycurl.E_WRITE_ERROR and self._capped):
            raise self._failure(code, message)
        status_code = curl.getinfo(pycurl.RESPONSE_CODE)
        return Response(
            status_code=status_code,
            location=curl.getinfo(pycurl.REDIRECT_URL) if status_code >= 300 else None,
            phases=self._phases(),
            tls_expires_at=self._certificate_expiry(),
            body=b"".join(self._kept or ()),
            truncated=self._capped,
            content_type=curl.getinfo(pycurl.CONTENT_TYPE),
            headers=_parse_headers(self._header_lines),
        )

    def connecting(
        self, host: str, port: int, *, timeout_ms: int, trusted: bool = False
    ) -> Connecting:
        """A TCP connection to host:port to open within `timeout_ms` (name
        lookup included) and close at once, begun."""
        guard = SocketGuard(self._blocked_networks)
        guard.reset(trusted=trusted)
        return Connecting(
            host, port, timeout_ms=timeout_ms, resolve=self._resolve, guard=guard
        )

    def fresh_handle(self, *, trusted: bool = False) -> tuple[pycurl.Curl, SocketGuard]:
        """A new easy handle of its own (never shared, never reused) with
        this transport's authorities, DNS overrides, blocked networks and
        source address, and no proxy; its guard says what it refused.
        The caller sets the protocols it may speak, and closes it."""
        curl = pycurl.Curl()
        guard = SocketGuard(self._blocked_networks)
        guard.reset(trusted=trusted)
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.PROXY, "")
        curl.setopt(pycurl.CAINFO, self._ca_bundle)
        if self._resolve:
            curl.setopt(pycurl.RESOLVE, self._resolve)
        if _source_address:
            curl.setopt(pycurl.INTERFACE, _source_address)
        guard.install(curl)
        return curl, guard

    def close(self) -> None:
        """Close the connections. Waits for DNS lookups that a timeout
        abandoned (at most the system resolver's own timeout)."""
        self._curl.close()

    def _set_defaults(self, ca_bundle: str, resolve: list[str]) -> None:
        curl = self._curl
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        curl.setopt(pycurl.FOLLOWLOCATION, 0)
        # An empty proxy overrides http_proxy and friends; .netrc is only
        # read when asked for, and no cookie engine is switched on.
        curl.setopt(pycurl.PROXY, "")
        curl.setopt(pycurl.USERAGENT, USER_AGENT)
        curl.setopt(pycurl.CAINFO, ca_bundle)
        curl.setopt(pycurl.SSL_EC_CURVES, TLS_GROUPS)
        curl.setopt(pycurl.WRITEFUNCTION, self._write)
        if resolve:
            curl.setopt(pycurl.RESOLVE, resolve)
        if _source_address:
            curl.setopt(pycurl.INTERFACE, _source_address)

    def _prepare(self, request: Request, timeout_ms: int) -> None:
        curl = self._curl
        self._guard.reset(trusted=request.trusted)
        if self._blocked_networks:
            curl.setopt(pycurl.FRESH_CONNECT, int(self._guard.fresh_connection_needed))
        self._received = 0
        self._capped = False
        self._kept = [] if request.keep_body else None
        self._keep_headers(request.keep_headers)
        if request.http2 is not self._http2:
            version = pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            curl.setopt(
                pycurl.HTTP_VERSION,
                version if request.http2 else pycurl.CURL_HTTP_VERSION_NONE,
            )
            self._http2 = request.http2
        curl.setopt(pycurl.URL, request.url)
        origin, https = _origin(request.url)
        self._origin = origin if https else None
        if origin is not None and self._sessions is not None:
            self._keep_sessions_in(
                self._sessions.share_for(origin, verified=request.verify_tls)
            )
        self._ask_for_certificate(
            self._origin is not None and self._certificate_stale(self._origin)
        )
        curl.setopt(pycurl.SSL_VERIFYPEER, int(request.verify_tls))
        curl.setopt(pycurl.SSL_VERIFYHOST, 2 if request.verify_tls else 0)
        curl.setopt(pycurl.TIMEOUT_MS, timeout_ms)
        curl.setopt(pycurl.CONNECTTIMEOUT_MS, timeout_ms)
        # "Expect:" stops libcurl from waiting for 100-continue on big bodies.
        headers = [f"{name}: {value}" for name, value in request.headers]
        curl.setopt(pycurl.HTTPHEADER, [*headers, "Expect:"])
        # HTTPGET undoes the last request's method, body and NOBODY.
        curl.setopt(pycurl.HTTPGET, 1)
        if request.method == "HEAD":
            curl.setopt(pycurl.NOBODY, 1)
        elif request.body or request.method in _METHODS_WITH_BODY:
            # pycurl holds the bytes (and their size) for libcurl, NULs and
            # all (a gRPC message has them); COPYPOSTFIELDS refuses a NUL.
            curl.setopt(pycurl.POSTFIELDS, request.body)
        if request.method in ("HEAD", "POST") or (
            request.method == "GET" and not request.body
        ):
            curl.unsetopt(pycurl.CUSTOMREQUEST)
        else:
            curl.setopt(pycurl.CUSTOMREQUEST, request.method)

    def _write(self, chunk: bytes) -> int | None:
        """Count the body; past MAX_BODY_BYTES, stop the transfer."""
        room = MAX_BODY_BYTES - self._received
        if len(chunk) > room:
            self._keep(chunk[:room])
            self._received = MAX_BODY_BYTES
            self._capped = True
            return 0  # anything but len(chunk) aborts the transfer
        self._keep(chunk)
        self._received += len(chunk)
        return None

    def _keep_headers(self, keep: bool) -> None:
        if keep:
            if self._header_lines is None:
                self._curl.setopt(pycurl.HEADERFUNCTION, self._header)
            self._header_lines = []
        elif self._header_lines is not None:
            self._curl.unsetopt(pycurl.HEADERFUNCTION)
            self._header_lines = None

    def _header(self, line: bytes) -> None:
        """libcurl's header callback: keep the lines of the last response
        (a 100 Continue or a redirect followed is a response of its own)."""
        lines = self._header_lines
        if lines is None:
            return
        if line.startswith(b"HTTP/"):
            lines.clear()
        elif len(lines) < MAX_KEPT_HEADERS:
            lines.append(line)

    def _keep(self, chunk: bytes) -> None:
        if self._kept is not None and chunk:
            self._kept.append(chunk)

    def _failure(self, code: int, message: str) -> TransferError:
        curl = self._curl
        return TransferError(
            code,
            message,
            os_errno=curl.getinfo(pycurl.OS_ERRNO),
            status_code=curl.getinfo(pycurl.RESPONSE_CODE) or None,
            phases=self._phases(),
            blocked=self._guard.refused,
        )

    def _phases(self) -> Phases:
        """Each phase's share of the last exchange. libcurl reports times
        from the start of the exchange and 0 for steps that did not happen
        (all of the first three on a reused connection)."""
        curl = self._curl
        resolved = curl.getinfo(pycurl.NAMELOOKUP_TIME_T)
        connected = curl.getinfo(pycurl.CONNECT_TIME_T)
        handshaken = curl.getinfo(pycurl.APPCONNECT_TIME_T)
        return Phases(
            dns_us=resolved or None,
            connect_us=connected - resolved if connected else None,
            tls_us=handshaken - connected if handshaken else None,
            first_byte_us=self._first_byte_us(handshaken or connected),
        )

    def _first_byte_us(self, ready_us: int) -> int | None:
        """From the request sent to the first byte of the answer; None when
        no answer came (libcurl still sets both times when it gives up).
        On a new connection it counts from the connection being ready, so
        the phases add up to the time to first byte: libcurl notes its
        "pretransfer" only after the request has gone, and on a busy
        machine the server's first milliseconds could fall before it. A
        reused connection (`ready_us` 0) has only that note to count from."""
        curl = self._curl
        if not curl.getinfo(pycurl.HEADER_SIZE):
            return None
        sent_us = ready_us or curl.getinfo(pycurl.PRETRANSFER_TIME_T)
        return curl.getinfo(pycurl.STARTTRANSFER_TIME_T) - sent_us

    def _certificate_stale(self, origin: str) -> bool:
        remembered = self._certificates.get(origin)
        return (
            remembered is None
            or self._clock() - remembered[1] >= CERTIFICATE_REFRESH_SECONDS
        )

    def _keep_sessions_in(self, share: pycurl.CurlShare | None) -> None:
        """Take and store this origin's TLS sessions and name lookups in
        `share` (None: the multi handle's own caches). pycurl wants the old
        one let go first. libcurl loads the RESOLVE answers into the DNS
        cache in use once, at the next transfer: set again, they reach the
        new share's cache too."""
        if share is not self._share:
            if self._share is not None:
                self._curl.unsetopt(pycurl.SHARE)
            if share is not None:
                self._curl.setopt(pycurl.SHARE, share)
            if self._resolve:
                self._curl.setopt(pycurl.RESOLVE, self._resolve)
            self._share = share

    def _ask_for_certificate(self, ask: bool) -> None:
        if ask != self._asking_certificate:
            self._curl.setopt(pycurl.OPT_CERTINFO, int(ask))
            _resume_sessions(self._curl, not ask)
            self._asking_certificate = ask

    def _certificate_expiry(self) -> datetime | None:
        """When the server's certificate expires: read after a handshake
        that asked for it, remembered for later polls of the same origin."""
        origin = self._origin
        if origin is None:
            return None
        if self._asking_certificate:
            chain = self._curl.getinfo(pycurl.INFO_CERTINFO)
            if chain:
                if len(self._certificates) >= MAX_REMEMBERED_CERTIFICATES:
                    self._certificates.clear()
                self._certificates[origin] = (_expiry(chain[0]), self._clock())
                self.certificates_read += 1
        remembered = self._certificates.get(origin)
        return remembered[0] if remembered else None


class Exchange(Protocol):
    """An exchange begun on an easy handle: run `curl` (alone, or on a
    CurlMulti with others), then finish() with libcurl's result."""

    @property
    def curl(self) -> pycurl.Curl: ...

    def finish(self, code: int = 0, message: str = "") -> Any: ...


def perform(exchange: Exchange) -> Any:
    """Run an exchange to its end on this thread; what finish() returns."""
    if isinstance(exchange, Readable):
        return exchange.finish(*exchange.wait())
    if exchange.curl is None:  # on a socket of the poller's own (sockets.py)
        return exchange.run()
    try:
        exchange.curl.perform()
    except pycurl.error as error:
        return exchange.finish(*error.args)
    return exchange.finish()


class Readable:
    """An exchange that is no libcurl transfer: waiting until a socket
    libcurl handed over (a WebSocket's, CONNECT_ONLY) has something to
    read, or the monotonic `deadline` passes. Transfers waits for it in
    the same epoll as its transfers; perform() waits on this thread."""

    curl = None

    def __init__(self, fd: int, deadline: float) -> None:
        self.fd = fd
        self.deadline = deadline

    def wait(self) -> tuple[int, str]:
        """Block until readable (0) or the deadline (a timeout's code)."""
        left = max(self.deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select([self.fd], [], [], left)
        return (0, "") if ready else (pycurl.E_OPERATION_TIMEDOUT, "")

    def finish(self, code: int = 0, message: str = "") -> None:
        if code:
            raise TransferError(code, message or "timed out waiting for an answer")


class Connecting:
    """A TCP connection opened and closed at once, on a handle of its own
    so that it is never kept for later polls and never reused."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout_ms: int,
        resolve: Sequence[str],
        guard: SocketGuard | None = None,
    ) -> None:
        self.curl = pycurl.Curl()
        self._guard = guard or SocketGuard(())
        _connect_only(self.curl, host, port, timeout_ms, list(resolve))
        self._guard.install(self.curl)

    def finish(self, code: int = 0, message: str = "") -> Connection:
        """The connection made; raises TransferError when it was not."""
        curl = self.curl
        try:
            if code:
                raise TransferError(
                    code,
                    message,
                    os_errno=curl.getinfo(pycurl.OS_ERRNO),
                    blocked=self._guard.refused,
                )
            resolved = curl.getinfo(pycurl.NAMELOOKUP_TIME_T)
            connected = curl.getinfo(pycurl.CONNECT_TIME_T)
            return Connection(
                elapsed_us=connected,
                phases=Phases(dns_us=resolved or None, connect_us=connected - resolved),
            )
        finally:
            curl.close()


def _parse_headers(lines: list[bytes] | None) -> tuple[tuple[str, str], ...]:
    """(name, value) pairs of raw header lines, read as Latin-1 (RFC 9110
    allows any byte in a value); lines that are not a header are left out."""
    if not lines:
        return ()
    pairs = []
    for line in lines:
        name, colon, value = line.decode("latin-1").partition(":")
        if colon and name.strip():
            pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


def _origin(url: str) -> tuple[str | None, bool]:
    """host:port of an http or https URL (None for any other), and
    whether it is https."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None, False
    return parts.netloc, parts.scheme == "https"


def _connect_only(
    curl: pycurl.Curl, host: str, port: int, timeout_ms: int, resolve: list[str]
) -> None:
    # libcurl's http handler with CONNECT_ONLY resolves and connects, then
    # stops: nothing is sent.
    if ":" in host:
        host = f"[{host}]"
    curl.setopt(pycurl.URL, f"http://{host}:{port}/")
    curl.setopt(pycurl.CONNECT_ONLY, 1)
    curl.setopt(pycurl.NOSIGNAL, 1)
    curl.setopt(pycurl.PROXY, "")
    curl.setopt(pycurl.TIMEOUT_MS, timeout_ms)
    curl.setopt(pycurl.CONNECTTIMEOUT_MS, timeout_ms)
    if resolve:
        curl.setopt(pycurl.RESOLVE, resolve)
    if _source_address:
        curl.setopt(pycurl.INTERFACE, _source_address)


def _resume_sessions(curl: pycurl.Curl, resume: bool) -> None:
    """Let libcurl resume TLS sessions, or not. A resumed handshake costs
    about 40 % less CPU than a full one (bench/tls_reuse.py), but the
    server sends no certificate in it, so libcurl reports no chain: a
    request that must read the certificate's expiry shakes hands in full."""
    curl.setopt(pycurl.SSL_SESSIONID_CACHE, int(resume))


def certificate_expiry(certificate: Sequence[tuple[str, str]]) -> datetime | None:
    """When a certificate of libcurl's INFO_CERTINFO expires."""
    return _expiry(certificate)


def _expiry(certificate: Sequence[tuple[str, str]]) -> datetime | None:
    for field, value in certificate:
        if field == "Expire date":
            try:
                return datetime.fromtimestamp(ssl.cert_time_to_seconds(value), UTC)
            except (ValueError, OverflowError):
                return None
    return None


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b
