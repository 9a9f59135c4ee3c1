"""One poll of one target: probe() sends the request and never raises.

Every failure becomes a down Outcome with a short reason a person can read
("timed out after 10 s", "connection refused", "expected 200, got 503").
The project's timeout bounds the whole poll: DNS, connect, TLS, headers,
body and every redirect, so a server that drips one byte a second cannot
hold a worker; the checks on the body are bounded too (verdict.py).

Log lines name the project by id, never by URL: a URL may carry
credentials and tokens.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import certifi

from polling.engine import verdict
from polling.engine.blocked import Taint, parse_networks
from polling.engine.heartbeats import missed_ping
from polling.engine.reasons import timed_out, transfer_reason
from polling.engine.tls_sessions import SessionShares
from polling.engine.transfers import Transfers
from polling.engine.transport import (
    MAX_BODY_BYTES,
    USER_AGENT,
    Certificates,
    Exchange,
    Phases,
    Request,
    Response,
    TransferError,
    Transport,
    perform,
)
from polling.engine.types import Outcome, Target, Task

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_BODY_BYTES",
    "USER_AGENT",
    "crashed",
    "make_handle",
    "make_transfers",
    "poll_steps",
    "probe",
    "resume",
]

MAX_REDIRECTS = 5
# The length of PollResult.error_message; probe.py stays free of Django.
MAX_ERROR_LENGTH = 1000
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
SCHEMES = ("http", "https")
_PLAIN_PREFIXES = ("http://", "https://")
DOWNGRADE_REFUSED = "redirect from https to http refused"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def make_handle(
    *,
    ca_bundle: str | None = None,
    resolve: Sequence[str] = (),
    blocked_networks: Sequence[str] = (),
) -> Transport:
    """Build the long-lived handle of one worker thread.

    `ca_bundle` is a PEM file of the certificate authorities to trust
    (default: certifi's); `resolve` overrides DNS, for tests; untrusted
    polls never connect to `blocked_networks`.
    """
    return Transport(
        ca_bundle=ca_bundle or certifi.where(),
        resolve=resolve,
        blocked_networks=parse_networks(blocked_networks),
        sessions=SessionShares(),
    )


def make_transfers(
    *,
    ca_bundle: str | None = None,
    resolve: Sequence[str] = (),
    blocked_networks: Sequence[str] = (),
    sessions: SessionShares | None = None,
    certificates: Certificates | None = None,
) -> Transfers:
    """Build what one worker thread runs its polls on: many at once, over
    shared connections, with the certificates it has read shared too.
    Untrusted polls never connect to `blocked_networks` (engine/blocked.py).
    Pass the poller's `sessions` and `certificates` to share the TLS
    sessions kept and the certificates read with its other workers, who
    poll the same hosts; without them this worker keeps its own."""
    sessions = SessionShares() if sessions is None else sessions
    certificates = {} if certificates is None else certificates
    ca_bundle = ca_bundle or certifi.where()
    networks = parse_networks(blocked_networks)
    taint = Taint()  # the connections are shared: so is what they reached
    return Transfers(
        lambda: Transport(
            ca_bundle=ca_bundle,
            resolve=resolve,
            certificates=certificates,
            blocked_networks=networks,
            taint=taint,
            sessions=sessions,
        )
    )


class PollFailed(Exception):
    def __init__(self, reason: str, status_code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status_code = status_code


_NO_PHASES = Phases()


@dataclass(slots=True)
class _Trace:
    """What the hops of one poll added up to."""

    phases: Phases = field(default_factory=Phases)
    tls_expires_at: datetime | None = None

    def add(self, phases: Phases, tls_expires_at: datetime | None = None) -> None:
        self.phases = phases if self.phases == _NO_PHASES else self.phases + phases
        if tls_expires_at and (
            self.tls_expires_at is None or tls_expires_at < self.tls_expires_at
        ):
            self.tls_expires_at = tls_expires_at


def probe(handle: Transport, task: Task) -> Outcome:
    """Poll the task's target once, on this thread, and say what happened."""
    steps = poll_steps(handle, task)
    try:
        step = resume(steps)
        while not isinstance(step, Outcome):
            try:
                result, error = perform(step), None
            except TransferError as failed:
                result, error = None, failed
            step = resume(steps, result, error)
    except Exception as error:  # poll_steps() never raises; a last resort
        steps.close()
        return crashed(task, error)
    return step


# What a poll is made of: the exchanges it needs, one after the other.
PollSteps = Generator[Exchange, Any, Outcome]


def resume(
    steps: PollSteps, result: Any = None, error: TransferError | None = None
) -> Exchange | Outcome:
    """Hand a poll the result of its last exchange (or the error it ended
    with); returns its next exchange, or its Outcome once it needs none."""
    try:
        return steps.send(result) if error is None else steps.throw(error)
    except StopIteration as done:
        return done.value


def poll_steps(handle: Transport, task: Task) -> PollSteps:
    """Poll the task's target once and say what happened, as a generator:
    it yields each exchange it needs, begun on `handle`, and is resumed
    with that exchange's result (see resume()). Whoever runs the exchanges
    chooses how: one at a time (probe()), or many at once on a CurlMulti
    (the executor). Returns the Outcome; never raises."""
    target = task.target
    started_at = datetime.now(UTC)
    if target.problem:
        return _outcome(task, started_at, _Trace(), None, target.problem)
    if target.heartbeat:
        return missed_ping(task, started_at)
    if target.url.lower().startswith("tcp://"):
        return (yield from _connect(handle, task, started_at))
    start = time.monotonic()
    trace = _Trace()
    try:
        response = yield from _follow(
            handle, target, start + target.timeout_seconds, trace
        )
        elapsed_ms = round((time.monotonic() - start) * 1000)
        reason = _judge(target, response, elapsed_ms)
    except PollFailed as failed:
        return _outcome(task, started_at, trace, failed.status_code, failed.reason)
    except Exception as exc:
        return _outcome(task, started_at, trace, None, _unexpected(target, exc))
    return _outcome(
        task,
        started_at,
        trace,
        response.status_code,
        reason,
        response_time_ms=elapsed_ms,
    )


def crashed(task: Task, error: BaseException) -> Outcome:
    """The outcome of a poll that raised where nothing should: a failed
    poll, so that it is stored and counted like any other."""
    reason = _unexpected(task.target, error)
    return _outcome(task, datetime.now(UTC), _Trace(), None, reason)


def _unexpected(target: Target, error: BaseException) -> str:
    logger.warning(
        "Unexpected error polling project %s", target.project_id, exc_info=error
    )
    return f"unexpected error: {type(error).__name__}: {error}"


def _judge(target: Target, response: Response, elapsed_ms: int) -> str:
    """Why the final response counts as down; empty when it is up. The
    status comes first, then the content, then the speed."""
    truncated = response.truncated
    return (
        verdict.status_reason(target.expected_status, response.status_code)
        or verdict.keyword_reason(
            target.keyword,
            verdict.body_text(response.body, response.content_type),
            truncated=truncated,
        )
        or verdict.json_reason(
            target.json_assertion, response.body, truncated=truncated
        )
        or verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    )


def _connect(handle: Transport, task: Task, started_at: datetime) -> PollSteps:
    """A TCP port check: up when a connection is accepted in time; the
    response time is the time to connect, name lookup included."""
    target = task.target
    parts = urlsplit(target.url)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not (host and port):
        return _outcome(task, started_at, _Trace(), None, f"invalid URL: {target.url}")
    trace = _Trace()
    try:
        connection = yield handle.connecting(
            host,
            port,
            timeout_ms=round(target.timeout_seconds * 1000),
            trusted=target.trusted,
        )
    except TransferError as error:
        reason = transfer_reason(error, target.url, target.timeout_seconds)
        return _outcome(task, started_at, trace, None, reason or error.message)
    trace.add(connection.phases)
    elapsed_ms = round(connection.elapsed_us / 1000)
    reason = verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return _outcome(task, started_at, trace, None, reason, response_time_ms=elapsed_ms)


def _outcome(
    task: Task,
    started_at: datetime,
    trace: _Trace,
    status_code: int | None,
    error: str,
    *,
    response_time_ms: int | None = None,
) -> Outcome:
    dns, connect, tls, first_byte = (_ms(us) for us in trace.phases)
    return Outcome(
        project_id=task.target.project_id,
        up=not error,
        started_at=started_at,
        due_at=task.due_at,
        status_code=status_code,
        response_time_ms=response_time_ms,
        error=error[:MAX_ERROR_LENGTH],
        dns_ms=dns,
        connect_ms=connect,
        tls_ms=tls,
        first_byte_ms=first_byte,
        tls_expires_at=trace.tls_expires_at,
    )


def _ms(microseconds: int | None) -> int | None:
    return None if microseconds is None else round(microseconds / 1000)


# Redirects -------------------------------------------------------------------


def _follow(
    handle: Transport, target: Target, deadline: float, trace: _Trace
) -> Generator[Exchange, Any, Response]:
    """Send the target's request and follow up to MAX_REDIRECTS redirects;
    returns the final response or raises PollFailed."""
    request = _first_request(target)
    for _ in range(MAX_REDIRECTS + 1):
        response = yield from _send(handle, request, deadline, target, trace)
        if not target.follow_redirects:
            return response
        if response.status_code not in REDIRECT_STATUSES or not response.location:
            return response
        request = _redirected(request, response, target.allow_insecure_redirects)
    raise PollFailed("too many redirects")


def _first_request(target: Target) -> Request:
    # The prefix test spares most polls a urlsplit().
    if (
        not target.url.startswith(_PLAIN_PREFIXES)
        and urlsplit(target.url).scheme not in SCHEMES
    ):
        raise PollFailed(f"unsupported URL: {target.url}")
    for name, value in target.headers:
        _check_header(name, value)
    return Request(
        method=target.method,
        url=target.url,
        headers=target.headers,
        body=target.body.encode(),
        verify_tls=target.verify_tls,
        keep_body=target.reads_body,
        trusted=target.trusted,
    )


def _check_header(name: str, value: str) -> None:
    if not (name.isascii() and value.isascii()):
        raise PollFailed("invalid request: header names and values must be ASCII")
    if not _TOKEN.fullmatch(name):
        raise PollFailed(f"invalid request: {name!r} is not a header name")
    if any(c in value for c in "\r\n\0"):
        raise PollFailed(f"invalid request: the value of {name} has a line break")


def _redirected(
    request: Request, response: Response, allow_insecure: bool = False
) -> Request:
    """The request a redirect asks for, as browsers (and httpx) make it,
    except that nothing the project set goes to another origin: neither
    its headers (any of them may be a credential) nor its body."""
    try:
        parts = urlsplit(response.location)
    except ValueError:
        raise PollFailed("invalid redirect location") from None
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise PollFailed(f"unsupported redirect target: {response.location}")
    if (
        parts.scheme == "http"
        and urlsplit(request.url).scheme == "https"
        and not allow_insecure
    ):
        raise PollFailed(DOWNGRADE_REFUSED)
    method, body = request.method, request.body
    if (response.status_code == 303 and method != "HEAD") or (
        response.status_code in (301, 302) and method == "POST"
    ):
        method, body = "GET", b""
    headers = request.headers
    if _origin(request.url) != _origin(response.location):
        headers, body = (), b""
    return replace(
        request, method=method, url=response.location, headers=headers, body=body
    )


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


# One exchange ----------------------------------------------------------------


def _send(
    handle: Transport, request: Request, deadline: float, target: Target, trace: _Trace
) -> Generator[Exchange, Any, Response]:
    left_ms = int((deadline - time.monotonic()) * 1000)
    if left_ms <= 0:
        raise PollFailed(_timed_out(target))
    try:
        response = yield handle.begin(request, timeout_ms=left_ms)
    except TransferError as error:
        trace.add(error.phases)
        reason = transfer_reason(error, request.url, target.timeout_seconds)
        raise PollFailed(
            reason or _unforeseen(error, target), error.status_code
        ) from None
    trace.add(response.phases, response.tls_expires_at)
    return response


def _timed_out(target: Target) -> str:
    return timed_out(target.timeout_seconds)


def _unforeseen(error: TransferError, target: Target) -> str:
    # libcurl's message may name the URL: it goes in the outcome, which
    # the project's users see, not in the log.
    logger.warning(
        "Unexpected libcurl error %d polling project %s",
        error.code,
        target.project_id,
    )
    return f"unexpected error: curl error {error.code}: {error.message}"
