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

import jmespath
from jmespath.exceptions import JMESPathError

from polling.engine import verdict
from polling.engine.probes.http import PollFailed, follow
from polling.engine.probes.outcomes import Trace, ms, outcome, unexpected
from polling.engine.transport import Exchange, Response, Transport
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
    mask = masker(target.secrets)
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
        request = _request_target(target, step, values)
        response = yield from follow(
            handle,
            request,
            deadline,
            trace,
            keep_body=True,
            keep_headers=bool(step.header_rules) or _captures_header(step),
        )
        elapsed_ms = round((time.monotonic() - start) * 1000)
        reason = _judge(step, response, elapsed_ms) or _capture(step, response, values)
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


def _request_target(target: Target, step: Step, values: dict[str, str]) -> Target:
    """The target of one step's request: the flow's settings with the
    step's request, placeholders filled in."""
    secrets = dict(target.secrets)

    def fill(text: str, encode: Callable[[str], str] = str) -> str:
        def value(match: re.Match) -> str:
            is_secret, name = bool(match.group(1)), match.group(2)
            found = (secrets if is_secret else values).get(name)
            if found is None:
                what = "the team secret" if is_secret else "the value"
                raise PollFailed(f"{what} {name} is not set")
            return encode(found)

        return _PLACEHOLDER.sub(value, text) if "{{" in text else text

    return replace(
        target,
        url=fill(step.url, lambda text: quote(text, safe="")),
        method=step.method,
        headers=tuple((name, fill(value)) for name, value in step.headers),
        body=fill(step.body),
        expected_status=step.expected_status,
        keyword=step.keyword,
        json_assertion=None,
        max_response_time_ms=step.max_response_time_ms,
        steps=(),
    )


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


def _judge(step: Step, response: Response, elapsed_ms: int) -> str:
    """Why the step's response fails its rules; empty when it passes.
    The status first, then the content, the headers, the speed."""
    truncated = response.truncated
    reason = verdict.status_reason(step.expected_status, response.status_code)
    reason = reason or verdict.keyword_reason(
        step.keyword,
        verdict.body_text(response.body, response.content_type),
        truncated=truncated,
    )
    for assertion in step.json_assertions:
        reason = reason or verdict.json_reason(
            assertion, response.body, truncated=truncated
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


def _capture(step: Step, response: Response, values: dict[str, str]) -> str:
    """Take the step's captures into `values`; the reason of the first
    that finds nothing, or ""."""
    document: Any = _UNREAD
    for name, source in step.captures:
        kind, _, spec = source.partition(":")
        if kind == "json":
            if document is _UNREAD:
                document = _json(response.body)
            found = _search(spec, document)
        elif kind == "header":
            found = _header(response, spec)
        elif kind == "regex":
            text = verdict.body_text(response.body, response.content_type)
            match = re.search(spec, text)
            found = match.group(1) if match else None
        else:  # status
            found = str(response.status_code)
        if found is None:
            return f"capture {name}: {source} found nothing"
        values[name] = found if isinstance(found, str) else json.dumps(found)
    return ""


_UNREAD = object()


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _search(query: str, document: Any) -> Any:
    if document is None:
        return None
    try:
        return jmespath.search(query, document)
    except JMESPathError:
        return None


def _excerpt(response: Response | None, mask: Callable[[str], str]) -> str:
    if response is None or not response.body:
        return ""
    # Masked whole, then cut: a cut first could leave half a secret.
    text = verdict.body_text(response.body, response.content_type)
    return mask(text)[:EXCERPT_CHARACTERS]
