"""The WebSocket check (ws://, wss://), spoken by libcurl on the
executor's loop: up when the upgrade succeeds (101) and, when the URL has
`?send=`, that text message goes out and a reply containing `?expect=`
arrives within the timeout. The connection is then closed politely: a
close frame, and the server's close frame awaited (briefly). `send` and
`expect` are the monitor's; the rest of the URL goes to the server.

libcurl does the upgrade (CONNECT_ONLY=2) as a transfer; then the probe
sends and reads frames on the connection it hands over, yielding a
Readable exchange whenever it must wait for the server.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pycurl

from polling.engine import verdict
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import timed_out, transfer_reason
from polling.engine.transport import (
    Exchange,
    Phases,
    Readable,
    TransferError,
    Transport,
    certificate_expiry,
)
from polling.engine.types import Outcome, Task

SCHEMES = ("ws", "wss")
# libcurl's CURLPROTO_WS and CURLPROTO_WSS, which pycurl does not name.
PROTO_WS, PROTO_WSS = 1 << 30, 1 << 31
OURS = ("send", "expect")
# How long the close handshake may take, at most, once the check is up.
CLOSE_SECONDS = 1.0
NORMAL_CLOSURE = struct.pack("!H", 1000)
_MAX_KEPT = 64 * 1024  # of the replies, while looking for the expected text


class CheckFailed(Exception):
    pass


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One WebSocket check of the task's target (see probe.poll_steps)."""
    target = task.target
    start = time.monotonic()
    deadline = start + target.timeout_seconds
    trace = Trace()
    url, params = _split(target.url)
    upgrade = Upgrading(handle, task, url)
    try:
        phases, expires = yield upgrade
    except TransferError as error:
        trace.add(error.phases)
        reason = transfer_reason(error, url, target.timeout_seconds)
        return outcome(task, started_at, trace, None, reason or _refused(error))
    except GeneratorExit:  # abandoned: the handle is ours to close
        upgrade.curl.close()
        raise
    trace.add(phases, expires)
    curl = upgrade.curl
    try:
        reply = ""
        if "send" in params:
            reply = yield from _converse(curl, params, deadline, target)
        elapsed_ms = round((time.monotonic() - start) * 1000)
        yield from _close(curl, min(deadline, time.monotonic() + CLOSE_SECONDS))
    except CheckFailed as failed:
        return outcome(task, started_at, trace, 101, str(failed))
    finally:
        curl.close()
    reason = verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(
        task,
        started_at,
        trace,
        101,
        reason,
        response_time_ms=elapsed_ms,
        message=reply[:200],
    )


def _split(url: str) -> tuple[str, dict[str, str]]:
    """The URL the server gets (without send and expect), and those two."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    ours = {name: value for name, value in pairs if name in OURS}
    theirs = urlencode([(name, value) for name, value in pairs if name not in OURS])
    return urlunsplit(parts._replace(query=theirs, fragment="")), ours


def _converse(curl, params: dict, deadline: float, target) -> Generator:
    """Send the text; read frames until one holds the expected text."""
    try:
        curl.ws_send(params["send"], pycurl.WS_TEXT)
    except (BlockingIOError, pycurl.error) as error:
        reason = f"WebSocket: the message could not be sent ({error})"
        raise CheckFailed(reason) from None
    expected = params.get("expect", "")
    received = ""
    while True:
        frame = yield from _next_frame(curl, deadline, target)
        if frame is None:
            raise CheckFailed(
                "WebSocket: the server closed the connection before replying"
                + (f" (“{received[-100:]}”)" if received else "")
            )
        received = (received + frame)[-_MAX_KEPT:]
        if expected in received:
            return received


def _next_frame(curl, deadline: float, target) -> Generator:
    """The text of the next whole data frame; None when the server closed."""
    chunks: list[bytes] = []
    while True:
        try:
            data, meta = curl.ws_recv(_MAX_KEPT)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise CheckFailed(
                    f"{timed_out(target.timeout_seconds)} waiting for a reply"
                ) from None
            try:
                yield Readable(_socket(curl), deadline)
            except TransferError:
                raise CheckFailed(
                    f"{timed_out(target.timeout_seconds)} waiting for a reply"
                ) from None
            continue
        except pycurl.error as error:
            if error.args[0] == pycurl.E_GOT_NOTHING:
                return None
            raise CheckFailed(f"WebSocket: {error.args[-1]}") from None
        if meta.flags & pycurl.WS_CLOSE:
            return None
        if meta.flags & (pycurl.WS_PING | pycurl.WS_PONG):
            continue  # libcurl answers pings itself
        chunks.append(data)
        if not meta.bytesleft and not meta.flags & pycurl.WS_CONT:
            return b"".join(chunks).decode("utf-8", "replace")


def _close(curl, deadline: float) -> Generator:
    """Send a close frame and wait, until `deadline`, for the server's."""
    try:
        curl.ws_send(NORMAL_CLOSURE, pycurl.WS_CLOSE)
    except (BlockingIOError, pycurl.error):
        return
    while time.monotonic() < deadline:
        try:
            _, meta = curl.ws_recv(_MAX_KEPT)
        except BlockingIOError:
            try:
                yield Readable(_socket(curl), deadline)
            except TransferError:
                return
            continue
        except pycurl.error:
            return  # closed
        if meta.flags & pycurl.WS_CLOSE:
            return


def _socket(curl) -> int:
    return curl.getinfo(pycurl.ACTIVESOCKET)


def _refused(error: TransferError) -> str:
    # libcurl: "Refused WebSocket upgrade: 200"
    status = error.message.rpartition("upgrade: ")[2]
    if status.isdigit():
        return f"WebSocket upgrade refused: the server answered {status}, not 101"
    return f"WebSocket: {error.message}"


class Upgrading:
    """The HTTP upgrade to WebSocket on a handle of its own, kept open
    after it (CONNECT_ONLY=2); finish() returns (phases, certificate
    expiry) or raises TransferError."""

    # Left on the CurlMulti when done: removing it would close the connection.
    keeps_connection = True

    def __init__(self, handle: Transport, task: Task, url: str) -> None:
        target = task.target
        self.curl, self._guard = handle.fresh_handle(trusted=target.trusted)
        curl = self.curl
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.PROTOCOLS, PROTO_WS | PROTO_WSS)
        curl.setopt(pycurl.CONNECT_ONLY, 2)
        curl.setopt(pycurl.OPT_CERTINFO, 1)
        curl.setopt(pycurl.SSL_VERIFYPEER, int(target.verify_tls))
        curl.setopt(pycurl.SSL_VERIFYHOST, 2 if target.verify_tls else 0)
        timeout_ms = round(target.timeout_seconds * 1000)
        curl.setopt(pycurl.TIMEOUT_MS, timeout_ms)
        curl.setopt(pycurl.CONNECTTIMEOUT_MS, timeout_ms)
        # libcurl drops its timeout while it awaits the upgrade's answer:
        # Transfers ends the exchange at this deadline, and when run alone
        # (perform()) the progress callback does.
        self.deadline = time.monotonic() + target.timeout_seconds
        curl.setopt(pycurl.NOPROGRESS, 0)
        curl.setopt(pycurl.XFERINFOFUNCTION, self._progress)
        headers = [f"{name}: {value}" for name, value in target.headers]
        if headers:
            curl.setopt(pycurl.HTTPHEADER, headers)

    def _progress(self, *_) -> int:
        return 1 if time.monotonic() >= self.deadline else 0

    def finish(self, code: int = 0, message: str = "") -> tuple:
        curl = self.curl
        if code == pycurl.E_ABORTED_BY_CALLBACK:
            code = pycurl.E_OPERATION_TIMEDOUT  # the deadline, in _progress
        resolved = curl.getinfo(pycurl.NAMELOOKUP_TIME_T)
        connected = curl.getinfo(pycurl.CONNECT_TIME_T)
        handshaken = curl.getinfo(pycurl.APPCONNECT_TIME_T)
        phases = Phases(
            dns_us=resolved or None,
            connect_us=connected - resolved if connected else None,
            tls_us=handshaken - connected if handshaken else None,
        )
        if code:
            error = TransferError(
                code,
                message,
                os_errno=curl.getinfo(pycurl.OS_ERRNO),
                status_code=curl.getinfo(pycurl.RESPONSE_CODE) or None,
                phases=phases,
                blocked=self._guard.refused,
            )
            curl.close()
            raise error
        chain = curl.getinfo(pycurl.INFO_CERTINFO)
        return phases, certificate_expiry(chain[0]) if chain else None
