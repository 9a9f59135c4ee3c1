"""The flow check: the target's steps, one after the other, in one poll on
the worker's transfers like any other (no thread of its own), within the
project's timeout. Each step is an HTTP request sent as the HTTP check
sends one (probes/http.py: redirects, the blocked-networks guard), judged
by its own rules; what it captures is put into the next steps' URL
(URL-encoded), headers and body. The first step that fails ends the poll,
and its reason names it: "step 2 'my orders': expected 200-299, got 401".

The team's secrets ({{secrets.NAME}}) go into the requests only: every
reason and response excerpt is masked before it leaves this module.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Generator
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import quote

from jmespath.exceptions import JMESPathError

from polling.engine import verdict
from polling.engine.probes.http import PollFailed, follow, new_request
from polling.engine.probes.outcomes import Trace, ms, outcome, unexpected
from polling.engine.transport import Exchange, Request, Response, Transport
from polling.engine.types import Outcome, Step, StepRun, Target, Task

# A flow has no URL: the steps a target carries choose this probe
# (probes.probe_of), not a scheme.
SCHEMES: tuple[str, ...] = ()
MASK = "••••"
# How much of a failed step's response is kept for the incident.
EXCERPT_CHARACTERS = 500
_PLACEHOLDER = re.compile(r"\{\{\s*(secrets\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One run of the task's flow (see probe.poll_steps)."""
    target = task.target
    start = time.monotonic()
    deadline = start + target.timeout_seconds
    trace, runs, values = Trace(), [], {}
    status_code = None
    for number, step in enumerate(target.steps, start=1):
        step_trace = Trace()
        try:
            run, response = yield from _run(
                handle, target, step, values, deadline, step_trace
            )
        except Exception as exc:  # a last resort: never raise
            run = StepRun(step.name, False, error=unexpected(target, exc))
            response = None
        trace.add(step_trace.phases, step_trace.tls_expires_at)
        status_code = run.status_code
        if not run.up:
            # Only a failed poll has something to mask (and pays for it).
            mask = masker(target.secrets)
            reason = mask(f"step {number} '{step.name}': {run.error}")
            runs.append(replace(run, error=reason, excerpt=_excerpt(response, mask)))
            return _outcome(task, started_at, trace, status_code, reason, runs, start)
        runs.append(run)
    return _outcome(task, started_at, trace, status_code, "", runs, start)


def _outcome(task, started_at, trace, status_code, reason, runs, start) -> Outcome:
    total_ms = round((time.monotonic() - start) * 1000)
    return outcome(
        task,
        started_at,
        trace,
        status_code,
        reason,
        response_time_ms=total_ms,
        steps=tuple(runs),
    )


def _run(
    handle: Transport,
    target: Target,
    step: Step,
    values: dict[str, str],
    deadline: float,
    trace: Trace,
) -> Generator[Exchange, Any, tuple[StepRun, Response | None]]:
    """Send one step and judge it; adds what it captures to `values`."""
    start = time.monotonic()
    response = None
    try:
        # The step's request, sent with the flow's settings (redirects,
        # TLS, network): made directly, not as a Target of its own, which
        # cost more than the rest of the step's Python.
        request = _request(target, step, values)
        response = yield from follow(handle, target, deadline, trace, first=request)
        elapsed_ms = round((time.monotonic() - start) * 1000)
        body = _Body(response)
        reason = _judge(step, response, body, elapsed_ms) or _capture(
            step, response, body, values
        )
        status_code = response.status_code
    except PollFailed as failed:
        elapsed_ms, reason, status_code = None, failed.reason, failed.status_code
    dns, connect, tls, first_byte = (ms(us) for us in trace.phases)
    run = StepRun(
        name=step.name,
        up=not reason,
        status_code=status_code,
        response_time_ms=elapsed_ms,
        error=reason,
        dns_ms=dns,
        connect_ms=connect,
        tls_ms=tls,
        first_byte_ms=first_byte,
    )
    return run, response


# Placeholders -------------------------------------------------------------------


def _request(target: Target, step: Step, values: dict[str, str]) -> Request:
    """One step's request, placeholders filled in. Its body is always
    kept (a failed step's excerpt is made of it), its headers when a rule
    or a capture reads them."""

    def fill(text: str, encode: Callable[[str], str] = str) -> str:
        if "{{" not in text:
            return text

        def value(match: re.Match) -> str:
            is_secret, name = bool(match.group(1)), match.group(2)
            found = (dict(target.secrets) if is_secret else values).get(name)
            if found is None:
                what = "the team secret" if is_secret else "the value"
                raise PollFailed(f"{what} {name} is not set")
            return encode(found)

        return _PLACEHOLDER.sub(value, text)

    headers = step.headers
    if any("{{" in value for _, value in headers):
        headers = tuple((name, fill(value)) for name, value in headers)
    return new_request(
        target,
        step.method,
        fill(step.url, _url_encoded),
        headers,
        fill(step.body),
        keep_body=True,
        keep_headers=bool(step.header_rules) or _captures_header(step),
    )


def _url_encoded(text: str) -> str:
    return quote(text, safe="")


def masker(secrets: tuple[tuple[str, str], ...]) -> Callable[[str], str]:
    """A function that hides every secret value (and its URL-encoded form)
    in a text."""
    hidden = sorted(
        {form for _, value in secrets if value for form in _forms(value)},
        key=len,
        reverse=True,
    )
    if not hidden:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(value) for value in hidden))
    return lambda text: pattern.sub(MASK, text) if text else text


def _forms(value: str) -> tuple[str, ...]:
    """A secret as it may appear: as sent, URL-encoded, JSON-escaped."""
    return (value, quote(value, safe=""), json.dumps(value)[1:-1])


# Judging and capturing --------------------------------------------------------


class _Body:
    """A step's response body, decoded as text or parsed as JSON at most
    once for all its rules and captures."""

    __slots__ = ("_document", "_response", "_text")

    def __init__(self, response: Response) -> None:
        self._response = response
        self._text: str | None = None
        self._document: Any = _UNREAD

    def text(self) -> str:
        if self._text is None:
            response = self._response
            self._text = verdict.body_text(response.body, response.content_type)
        return self._text

    def document(self) -> Any:
        """The body's JSON, NOT_JSON or TOO_DEEP (verdict.parse_json)."""
        if self._document is _UNREAD:
            self._document = verdict.parse_json(self._response.body)
        return self._document


_UNREAD = object()


def _judge(step: Step, response: Response, body: _Body, elapsed_ms: int) -> str:
    """Why the step's response fails its rules; empty when it passes.
    The status first, then the content, the headers, the speed."""
    truncated = response.truncated
    reason = verdict.status_reason(step.expected_status, response.status_code)
    if not reason and step.keyword is not None:
        reason = verdict.keyword_reason(step.keyword, body.text(), truncated=truncated)
    for assertion in step.json_assertions:
        reason = reason or verdict.document_reason(
            assertion, body.document(), truncated=truncated
        )
    for name, text in step.header_rules:
        reason = reason or _header_reason(response, name, text)
    return reason or verdict.slow_reason(step.max_response_time_ms, elapsed_ms)


def _header_reason(response: Response, name: str, text: str) -> str:
    value = _header(response, name)
    if value is None:
        return f"header {name} missing"
    if text.lower() not in value.lower():
        return f"header {name}: expected it to contain '{text}', got '{value[:60]}'"
    return ""


def _header(response: Response, name: str) -> str | None:
    wanted = name.lower()
    found = [value for key, value in response.headers if key.lower() == wanted]
    return found[-1] if found else None


def _captures_header(step: Step) -> bool:
    return any(source.startswith("header:") for _, source in step.captures)


def _capture(
    step: Step, response: Response, body: _Body, values: dict[str, str]
) -> str:
    """Take the step's captures into `values`; the reason of the first
    that finds nothing, or ""."""
    for name, source in step.captures:
        kind, _, spec = source.partition(":")
        if kind == "json":
            found = _search(spec, body.document())
        elif kind == "header":
            found = _header(response, spec)
        elif kind == "regex":
            match = re.search(spec, body.text())
            found = match.group(1) if match else None
        else:  # status
            found = str(response.status_code)
        if found is None:
            return f"capture {name}: {source} found nothing"
        values[name] = found if isinstance(found, str) else json.dumps(found)
    return ""


def _search(query: str, document: Any) -> Any:
    if document is verdict.NOT_JSON or document is verdict.TOO_DEEP:
        return None
    try:
        return verdict.compiled(query).search(document)
    except (JMESPathError, RecursionError):
        return None


def _excerpt(response: Response | None, mask: Callable[[str], str]) -> str:
    if response is None or not response.body:
        return ""
    # Masked whole, then cut: a cut first could leave half a secret.
    text = verdict.body_text(response.body, response.content_type)
    return mask(text)[:EXCERPT_CHARACTERS]
