"""The mail server check (smtp://, smtps://, imap://, imaps://, pop3://,
pop3s://), spoken by libcurl on the executor's loop like an HTTP poll.

Up when the server greets, answers EHLO (IMAP: CAPABILITY, POP3: CAPA),
completes TLS when it is asked for, logs in when the URL has
`user:password@`, and answers NOOP. TLS is implicit for the schemes
ending in s; for the others `?starttls=required|optional|off` says
whether STARTTLS must be done (default: required on port 587, optional
elsewhere). A certificate is verified like an HTTPS one, and its expiry
feeds the same warnings. The greeting is the poll's message.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import pycurl

from polling.engine import verdict
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.reasons import transfer_reason
from polling.engine.transport import (
    Exchange,
    Phases,
    TransferError,
    Transport,
    certificate_expiry,
)
from polling.engine.types import Outcome, Task

SCHEMES = ("smtp", "smtps", "imap", "imaps", "pop3", "pop3s")
_PROTOCOLS = {
    "smtp": pycurl.PROTO_SMTP,
    "smtps": pycurl.PROTO_SMTPS,
    "imap": pycurl.PROTO_IMAP,
    "imaps": pycurl.PROTO_IMAPS,
    "pop3": pycurl.PROTO_POP3,
    "pop3s": pycurl.PROTO_POP3S,
}
_NAMES = {"smtp": "SMTP", "imap": "IMAP", "pop3": "POP3"}
STARTTLS = {
    "required": pycurl.USESSL_ALL,
    "optional": pycurl.USESSL_TRY,
    "off": pycurl.USESSL_NONE,
}
SUBMISSION_PORT = 587  # where STARTTLS is required unless the URL says otherwise


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """One mail server check of the task's target (see probe.poll_steps)."""
    target = task.target
    start = time.monotonic()
    try:
        talk = Talking(handle, task)
    except ValueError as error:
        return outcome(task, started_at, Trace(), None, f"invalid URL: {error}")
    trace = Trace()
    try:
        result = yield talk
    except TransferError as error:
        trace.add(error.phases)
        reason = talk.reason(error)
        return outcome(task, started_at, trace, None, reason, message=talk.greeting)
    trace.add(result[0], result[1])
    elapsed_ms = round((time.monotonic() - start) * 1000)
    reason = verdict.slow_reason(target.max_response_time_ms, elapsed_ms)
    return outcome(
        task,
        started_at,
        trace,
        None,
        reason,
        response_time_ms=elapsed_ms,
        message=talk.greeting,
    )


class Talking:
    """One conversation with a mail server on a handle of its own: greeting,
    EHLO/CAPABILITY, TLS, login, NOOP. finish() returns (phases, when the
    certificate expires) or raises TransferError."""

    def __init__(self, handle: Transport, task: Task) -> None:
        target = task.target
        parts = urlsplit(target.url)
        scheme = parts.scheme.lower()
        host, port = parts.hostname, parts.port  # raises ValueError for a bad port
        if not host:
            raise ValueError("no host name")
        params = dict(parse_qsl(parts.query))
        mode = params.get("starttls") or (
            "required" if port == SUBMISSION_PORT else "optional"
        )
        if mode not in STARTTLS:
            raise ValueError(f"starttls is required, optional or off, not {mode}")
        self.protocol = _NAMES[scheme.removesuffix("s")]
        self.password = unquote(parts.password or "")
        self.lines: list[str] = []
        self._timeout_seconds = target.timeout_seconds
        self._url = target.url
        self.curl, self._guard = handle.fresh_handle(trusted=target.trusted)
        self._set_up(scheme, host, port, parts, mode, target)

    @property
    def greeting(self) -> str:
        return self.lines[0][:200] if self.lines else ""

    def _set_up(self, scheme, host, port, parts, mode, target) -> None:
        curl = self.curl
        shown_host = f"[{host}]" if ":" in host else host
        where = f"{scheme}://{shown_host}" + (f":{port}" if port else "") + "/"
        curl.setopt(pycurl.URL, where)
        curl.setopt(pycurl.PROTOCOLS, _PROTOCOLS[scheme])
        curl.setopt(pycurl.USE_SSL, STARTTLS[mode])
        curl.setopt(pycurl.CUSTOMREQUEST, "NOOP")
        curl.setopt(pycurl.NOBODY, 1)
        curl.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
        curl.setopt(pycurl.VERBOSE, 1)
        curl.setopt(pycurl.DEBUGFUNCTION, self._heard)
        curl.setopt(pycurl.OPT_CERTINFO, 1)
        curl.setopt(pycurl.SSL_VERIFYPEER, int(target.verify_tls))
        curl.setopt(pycurl.SSL_VERIFYHOST, 2 if target.verify_tls else 0)
        timeout_ms = round(target.timeout_seconds * 1000)
        curl.setopt(pycurl.TIMEOUT_MS, timeout_ms)
        curl.setopt(pycurl.CONNECTTIMEOUT_MS, timeout_ms)
        if parts.username:
            curl.setopt(pycurl.USERNAME, unquote(parts.username))
            curl.setopt(pycurl.PASSWORD, self.password)

    def _heard(self, kind: int, data: bytes) -> None:
        if kind == pycurl.INFOTYPE_HEADER_IN and len(self.lines) < 50:
            self.lines.append(data.decode("utf-8", "replace").strip())

    def finish(self, code: int = 0, message: str = "") -> tuple:
        curl = self.curl
        try:
            phases = _phases(curl)
            if code:
                raise TransferError(
                    code,
                    message,
                    os_errno=curl.getinfo(pycurl.OS_ERRNO),
                    phases=phases,
                    blocked=self._guard.refused,
                )
            chain = curl.getinfo(pycurl.INFO_CERTINFO)
            return phases, certificate_expiry(chain[0]) if chain else None
        finally:
            curl.close()

    def reason(self, error: TransferError) -> str:
        """Why the conversation failed, in words; never the password."""
        if error.code == pycurl.E_USE_SSL_FAILED:
            return f"{self.protocol}: the server does not offer STARTTLS"
        if error.code == pycurl.E_LOGIN_DENIED:
            return self._masked(f"{self.protocol} login failed: {self._last_line()}")
        reason = transfer_reason(error, self._url, self._timeout_seconds)
        if reason:
            return reason
        said = self._last_line() or error.message
        return self._masked(f"{self.protocol}: {said}")

    def _last_line(self) -> str:
        line = self.lines[-1] if self.lines else ""
        tag, _, rest = line.partition(" ")
        if self.protocol == "IMAP" and tag != "*" and rest:
            line = rest  # a tagged answer: the tag is libcurl's counter
        return line[:200]

    def _masked(self, text: str) -> str:
        return text.replace(self.password, "***") if self.password else text


def _phases(curl: pycurl.Curl) -> Phases:
    resolved = curl.getinfo(pycurl.NAMELOOKUP_TIME_T)
    connected = curl.getinfo(pycurl.CONNECT_TIME_T)
    handshaken = curl.getinfo(pycurl.APPCONNECT_TIME_T)
    return Phases(
        dns_us=resolved or None,
        connect_us=connected - resolved if connected else None,
        tls_us=handshaken - connected if handshaken else None,
    )
