"""The HTTP(S) check: send the project's request, follow its redirects,
judge the final response by the project's rules (engine/verdict.py:
status, keyword, JSON, response time).

Nothing the project set goes to another origin on a redirect, and an
https poll is never led to plain http unless the project allows it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Generator
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from polling.engine import verdict
from polling.engine.probes.outcomes import Trace, outcome, unexpected
from polling.engine.reasons import timed_out, transfer_reason
from polling.engine.transport import (
    Exchange,
    Request,
    Response,
    TransferError,
    Transport,
)
from polling.engine.types import Outcome, Target, Task

logger = logging.getLogger(__name__)

SCHEMES = ("http", "https")
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_PLAIN_PREFIXES = ("http://", "https://")
DOWNGRADE_REFUSED = "redirect from https to http refused"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class PollFailed(Exception):
    def __init__(self, reason: str, status_code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status_code = status_code


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One HTTP(S) poll of the task's target (see probe.poll_steps)."""
    target = task.target
    start = time.monotonic()
    trace = Trace()
    try:
        response = yield from follow(
            handle, target, start + target.timeout_seconds, trace
        )
        elapsed_ms = round((time.monotonic() - start) * 1000)
        reason = _judge(target, response, elapsed_ms)
    except PollFailed as failed:
        return outcome(task, started_at, trace, failed.status_code, failed.reason)
    except Exception as exc:
        return outcome(task, started_at, trace, None, unexpected(target, exc))
    return outcome(
        task,
        started_at,
        trace,
        response.status_code,
        reason,
        response_time_ms=elapsed_ms,
    )


def _judge(target: Target, response: Response, elapsed_ms: int) -> str:
    """Why the final response counts as down; empty when it is up. The
    status comes first, then the content, then the speed."""
    truncated = response.truncated
    return (
        verdict.status_reason(target.expected_status, response.status_code)
        or verdict.header_reason(target.header_assertions, response.headers)
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


# Redirects -------------------------------------------------------------------


def follow(
    handle: Transport,
    target: Target,
    deadline: float,
    trace: Trace,
    *,
    first: Request | None = None,
) -> Generator[Exchange, Any, Response]:
    """Send the target's request (or `first`, a flow step's, made by
    new_request) and follow up to MAX_REDIRECTS redirects, as the
    target's settings say; returns the final response or raises
    PollFailed."""
    request = first or _first_request(target)
    for _ in range(MAX_REDIRECTS + 1):
        response = yield from _send(handle, request, deadline, target, trace)
        if not target.follow_redirects:
            return response
        if response.status_code not in REDIRECT_STATUSES or not response.location:
            return response
        request = _redirected(request, response, target.allow_insecure_redirects)
    raise PollFailed("too many redirects")


def _first_request(target: Target) -> Request:
    return new_request(
        target,
        target.method,
        target.url,
        target.headers,
        target.body,
        keep_body=target.reads_body,
        keep_headers=bool(target.header_assertions),
    )


def new_request(
    target: Target,
    method: str,
    url: str,
    headers: tuple[tuple[str, str], ...],
    body: str,
    *,
    keep_body: bool,
    keep_headers: bool,
) -> Request:
    """The request of `url` with the target's TLS and network settings;
    raises PollFailed for a URL or header it cannot send."""
    # The prefix test spares most polls a urlsplit().
    if not url.startswith(_PLAIN_PREFIXES) and urlsplit(url).scheme not in SCHEMES:
        raise PollFailed(f"unsupported URL: {url}")
    for name, value in headers:
        _check_header(name, value)
    return Request(
        method=method,
        url=url,
        headers=headers,
        body=body.encode(),
        verify_tls=target.verify_tls,
        keep_body=keep_body,
        keep_headers=keep_headers,
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
    handle: Transport, request: Request, deadline: float, target: Target, trace: Trace
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
