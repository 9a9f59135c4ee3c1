"""The gRPC health check (grpc://host:port[/service], grpcs:// over TLS):
the standard grpc.health.v1.Health/Check for the service the path names
(empty: the server as a whole). Up when the answer is SERVING; NOT_SERVING,
UNKNOWN and SERVICE_UNKNOWN, a service the server does not know and a
server without the health service are each a readable failure.

gRPC is HTTP/2: a POST of one length-prefixed protobuf message, answered
by one and a status in the trailers. libcurl speaks it on the executor's
loop like an HTTP poll (HTTP/2 from the first byte without TLS, by ALPN
with it), so a check costs what an HTTP poll does, keeps its connection
for the next one, passes the same blocked-networks guard, and reports
the same phases and certificate expiry; a blocking gRPC client on a side
thread cost 4-6 ms of CPU a check (docs/benchmarks.md, issue #43). The
two messages are encoded here: each has one field.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import pycurl

from polling.engine import verdict
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import timed_out, transfer_reason
from polling.engine.transport import (
    Exchange,
    Request,
    Response,
    TransferError,
    Transport,
)
from polling.engine.types import Outcome, Task

SCHEMES = ("grpc", "grpcs")
DEFAULT_PORT = 443
CHECK_PATH = "/grpc.health.v1.Health/Check"
# grpc.health.v1.HealthCheckResponse.ServingStatus
SERVING_STATUSES = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
# The gRPC status codes (grpc-status), by number.
STATUS_CODES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)
DEADLINE_EXCEEDED, NOT_FOUND, UNIMPLEMENTED = 4, 5, 12
# The server took the connection and broke off the exchange: one that is
# not a gRPC server (an HTTP/1 one refuses the HTTP/2 preface and closes)
# or failed mid-call. Which of these libcurl sees depends on how far its
# sending got when the server closed; the reason says gRPC either way.
_BROKEN_OFF = frozenset(
    {pycurl.E_SEND_ERROR, pycurl.E_RECV_ERROR, pycurl.E_GOT_NOTHING}
)


class Unanswered(Exception):
    """The server's answer is not a gRPC health answer; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One gRPC health check of the task's target (see probe.poll_steps)."""
    target = task.target
    trace = Trace()
    try:
        url, service = _address(target.url)
    except ValueError as error:
        return outcome(task, started_at, trace, None, f"invalid URL: {error}")
    timeout_ms = round(target.timeout_seconds * 1000)
    request = Request(
        "POST",
        url + CHECK_PATH,
        headers=(
            ("Content-Type", "application/grpc"),
            ("TE", "trailers"),
            ("grpc-timeout", f"{timeout_ms}m"),
        ),
        body=frame(health_check_request(service)),
        keep_body=True,
        keep_headers=True,
        trusted=target.trusted,
        http2=True,
    )
    start = time.monotonic()
    try:
        response = yield handle.begin(request, timeout_ms=timeout_ms)
    except TransferError as error:
        trace.add(error.phases)
        reason = transfer_reason(error, url, target.timeout_seconds) or error.message
        if error.code in _BROKEN_OFF:
            reason = f"gRPC: no health answer ({reason})"
        return outcome(task, started_at, trace, None, reason)
    elapsed_ms = round((time.monotonic() - start) * 1000)
    trace.add(response.phases, response.tls_expires_at)
    try:
        status = serving_status(response, handle, service, target.timeout_seconds)
    except Unanswered as unanswered:
        return outcome(
            task,
            started_at,
            trace,
            None,
            unanswered.reason,
            response_time_ms=elapsed_ms,
        )
    reason = "" if status == "SERVING" else f"gRPC health: {status}"
    reason = reason or verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(
        task,
        started_at,
        trace,
        None,
        reason,
        response_time_ms=elapsed_ms,
        message=status,
    )


def _address(url: str) -> tuple[str, str]:
    """The http(s) origin a grpc(s) URL names, and the service its path
    names; raises ValueError."""
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or DEFAULT_PORT
    if not host:
        raise ValueError("no host name")
    scheme = "https" if parts.scheme.lower() == "grpcs" else "http"
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}", unquote(parts.path).strip("/")


def serving_status(
    response: Response, handle: Transport, service: str, timeout: float
) -> str:
    """The ServingStatus's name the answer carries; raises Unanswered."""
    if handle.curl.getinfo(pycurl.INFO_HTTP_VERSION) != pycurl.CURL_HTTP_VERSION_2_0:
        raise Unanswered("gRPC: the server does not speak HTTP/2")
    if response.status_code != 200:
        raise Unanswered(f"gRPC: the server answered HTTP {response.status_code}")
    headers = {name.lower(): value for name, value in response.headers}
    code = headers.get("grpc-status")
    if code is None:
        raise Unanswered("gRPC: the answer has no grpc-status")
    if code != "0":
        raise Unanswered(_status_reason(code, headers, service, timeout))
    return SERVING_STATUSES.get(
        health_check_response_status(unframe(response.body)), "UNKNOWN"
    )


def _status_reason(code: str, headers: dict[str, str], service: str, timeout) -> str:
    number = int(code) if code.isdigit() else -1
    if number == DEADLINE_EXCEEDED:
        return timed_out(timeout)
    if number == NOT_FOUND:
        return f"gRPC health: SERVICE_UNKNOWN (the server does not know “{service}”)"
    if number == UNIMPLEMENTED:
        return "gRPC health: the server has no health service (UNIMPLEMENTED)"
    name = STATUS_CODES[number] if 0 <= number < len(STATUS_CODES) else code
    details = " ".join(unquote(headers.get("grpc-message", "")).split())
    return f"gRPC: {name}: {details}" if details else f"gRPC: {name}"


def health_check_request(service: str) -> bytes:
    """HealthCheckRequest{service}: field 1, a string (left out when empty,
    as proto3 does)."""
    if not service:
        return b""
    encoded = service.encode()
    return b"\x0a" + _varint(len(encoded)) + encoded


def health_check_response_status(message: bytes) -> int:
    """HealthCheckResponse's field 1 (a varint; 0 when left out); other
    fields are skipped. Raises Unanswered when the bytes are not protobuf."""
    status, at = 0, 0
    while at < len(message):
        key, at = _read_varint(message, at)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, at = _read_varint(message, at)
            if field == 1:
                status = value
        elif wire_type == 2:
            length, at = _read_varint(message, at)
            at += length
        elif wire_type in (1, 5):
            at += 8 if wire_type == 1 else 4
        else:
            raise Unanswered("gRPC: the answer is not a HealthCheckResponse")
    if at > len(message):
        raise Unanswered("gRPC: the answer is not a HealthCheckResponse")
    return status


def frame(message: bytes) -> bytes:
    """A gRPC message on the wire: not compressed, its length, itself."""
    return b"\x00" + len(message).to_bytes(4, "big") + message


def unframe(body: bytes) -> bytes:
    """The first message of a gRPC body; raises Unanswered."""
    if len(body) < 5:
        raise Unanswered("gRPC: the answer has no message")
    if body[0] != 0:
        raise Unanswered("gRPC: the answer is compressed, which was not asked for")
    length = int.from_bytes(body[1:5], "big")
    if len(body) < 5 + length:
        raise Unanswered("gRPC: the answer's message is cut short")
    return body[5 : 5 + length]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise Unanswered("gRPC: the answer is not a HealthCheckResponse")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
