"""The DNS check: dns://[resolver[:port]]/name?type=TYPE (RFC 4501's
form; no resolver: the system's). One query over UDP, asked again over
TCP when the answer is truncated, on the poller's own sockets
(engine/dns_query.py). Up when the response code is the expected one
(NOERROR by default) and the answers hold what is expected (any of, all
of, or exactly the expected ones; without expectations, NOERROR needs at
least one answer of the type asked); with DNSSEC required, the
resolver's AD flag too. The query time is the poll's response time."""

from __future__ import annotations

import functools
import time
from collections.abc import Generator
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import dns.flags
import dns.rcode
import dns.rdatatype

from polling.engine.dns_query import DnsQuery
from polling.engine.dns_wire import Question, Reply
from polling.engine.lookup import nameserver
from polling.engine.probes.addressing import Unreachable, address_of
from polling.engine.probes.outcomes import Trace, outcome
from polling.engine.sockets import SocketFailed
from polling.engine.transport import Transport
from polling.engine.types import Outcome, Target, Task

SCHEMES = ("dns",)
DEFAULT_PORT = 53
SHOWN_ANSWERS = 5
# URLs whose parts are kept, read once: a poller's DNS checks, polled again
# and again.
MAX_KEPT_URLS = 65536


class BadUrl(Exception):
    pass


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Any, Any, Outcome]:
    """One DNS check of the task's target (see probe.poll_steps)."""
    target = task.target
    try:
        resolver, port, name, rdtype = parse_url(target.url)
    except (BadUrl, ValueError, dns.rdatatype.UnknownRdatatype):
        return outcome(task, started_at, Trace(), None, f"invalid URL: {target.url}")
    deadline = time.monotonic() + target.timeout_seconds
    if resolver is None:
        resolver, port = nameserver()
    else:
        try:
            resolver = yield from address_of(handle, target, resolver, deadline)
        except Unreachable as failed:
            return outcome(task, started_at, Trace(), None, failed.reason)
    question = Question(name, rdtype, target.dns_dnssec)
    try:
        answer = yield _ask(question, resolver, port, deadline, target, tcp=False)
        spent = answer.elapsed_ms
        if answer.reply.flags & dns.flags.TC:
            answer = yield _ask(question, resolver, port, deadline, target, tcp=True)
            spent += answer.elapsed_ms
    except SocketFailed as failed:
        return outcome(
            task, started_at, Trace(), None, _no_answer(failed, resolver, port)
        )
    message = answer.reply
    reason = judge(target, message, name, rdtype)
    return outcome(
        task,
        started_at,
        Trace(),
        None,
        reason,
        response_time_ms=spent,
        message=_summary(message, rdtype),
    )


@functools.lru_cache(maxsize=MAX_KEPT_URLS)
def parse_url(url: str) -> tuple[str | None, int, str, int]:
    """(resolver or None, port, absolute name, type) of a dns:// URL."""
    parts = urlsplit(url)
    name = unquote(parts.path.lstrip("/")).rstrip(".")
    if not name:
        raise BadUrl(url)
    query = {key.lower(): values for key, values in parse_qs(parts.query).items()}
    rdtype = dns.rdatatype.from_text(query.get("type", ["A"])[0].upper())
    return parts.hostname, parts.port or DEFAULT_PORT, name + ".", rdtype


def judge(target: Target, message: Reply, name: str, rdtype) -> str:
    """Why the answer counts as down; "" when it is up."""
    rcode = dns.rcode.to_text(message.rcode())
    if rcode != target.dns_rcode:
        return f"expected {target.dns_rcode}, got {rcode}"
    if target.dns_dnssec and not message.flags & dns.flags.AD:
        return "answer not authenticated: the resolver did not set the AD flag"
    found = sorted(answers(message, rdtype))
    type_name = dns.rdatatype.to_text(rdtype)
    shown = name.rstrip(".")
    expected = target.dns_answers
    if not expected:
        if rcode == "NOERROR" and not found:
            return f"no {type_name} record for {shown}"
        return ""
    mode = target.dns_match
    if mode == "exactly" and set(found) != set(expected):
        return (
            f"{type_name} {shown}: expected exactly {_list(expected)}, "
            f"got {_list(found) or 'none'}"
        )
    if mode == "all" and (missing := [e for e in expected if e not in found]):
        got = _list(found) or "none"
        return f"{type_name} {shown}: {_list(missing)} missing, got {got}"
    if mode == "any" and not set(expected) & set(found):
        one_of = "one of " if len(expected) > 1 else ""
        return (
            f"{type_name} {shown}: expected {one_of}{_list(expected)}, "
            f"got {_list(found) or 'none'}"
        )
    return ""


def answers(message: Reply, rdtype) -> list[str]:
    """The answers of the type asked, as text (names absolute), in order."""
    return message.answers(rdtype)


def _ask(
    question: Question,
    resolver: str,
    port: int,
    deadline: float,
    target: Target,
    *,
    tcp: bool,
) -> DnsQuery:
    return DnsQuery(
        question,
        resolver,
        port,
        timeout_seconds=max(deadline - time.monotonic(), 0.001),
        shown_timeout=target.timeout_seconds,
        tcp=tcp,
    )


def _no_answer(failed: SocketFailed, resolver: str, port: int) -> str:
    server = f"[{resolver}]:{port}" if ":" in resolver else f"{resolver}:{port}"
    if failed.message == "connection refused":
        return f"no DNS server at {server} (port closed)"
    return f"no answer from {server}: {failed.message}"


def _summary(message: Reply, rdtype) -> str:
    found = sorted(answers(message, rdtype))
    rcode = dns.rcode.to_text(message.rcode())
    return f"{rcode}: {_list(found)}" if found else rcode


def _list(values: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(values[:SHOWN_ANSWERS])
    return shown + (
        f" and {len(values) - SHOWN_ANSWERS} more"
        if len(values) > SHOWN_ANSWERS
        else ""
    )
