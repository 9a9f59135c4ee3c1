"""One poll of one target: probe() sends the request and never raises.

Every failure becomes a down Outcome with a short reason a person can read
("timed out after 10 s", "connection refused", "expected 200, got 503").
The project's timeout bounds the whole poll, so a server that drips one
byte a second cannot hold a worker.

What is checked depends on the target's URL scheme: each kind's probe is a
module of engine/probes/, found through its registry. Log lines name the
project by id, never by URL: a URL may carry credentials and tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import certifi

from polling.engine.blocked import Network, Taint, parse_networks
from polling.engine.heartbeats import missed_ping
from polling.engine.pinger import Pingers
from polling.engine.probes import PollSteps, driver_for, probe_of
from polling.engine.probes.outcomes import Trace, outcome, unexpected
from polling.engine.tls_sessions import SessionShares
from polling.engine.transfers import Transfers
from polling.engine.transport import (
    MAX_BODY_BYTES,
    USER_AGENT,
    Certificates,
    Exchange,
    TransferError,
    Transport,
    perform,
)
from polling.engine.types import Outcome, Task

__all__ = [
    "MAX_BODY_BYTES",
    "USER_AGENT",
    "PollSteps",
    "crashed",
    "make_handle",
    "make_transfers",
    "needs_side_pool",
    "poll_steps",
    "probe",
    "resume",
    "side_check",
]


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
        pingers=Pingers(),
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
    pingers = Pingers()  # one ICMP socket per family for the worker's pings
    return Transfers(
        lambda: Transport(
            ca_bundle=ca_bundle,
            resolve=resolve,
            certificates=certificates,
            blocked_networks=networks,
            taint=taint,
            sessions=sessions,
            pingers=pingers,
        )
    )


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
        return outcome(task, started_at, Trace(), None, target.problem)
    if target.heartbeat:
        return missed_ping(task, started_at)
    kind_probe = probe_of(target)
    if kind_probe is None:
        reason = f"unsupported URL: {target.url}"
        return outcome(task, started_at, Trace(), None, reason)
    return (yield from kind_probe(handle, task, started_at))


def needs_side_pool(task: Task) -> bool:
    """Whether the task's poll needs a blocking driver, so the side pool
    (engine/side_pool.py) runs it rather than a libcurl worker."""
    target = task.target
    return (
        not (target.problem or target.heartbeat) and driver_for(target.url) is not None
    )


def side_check(task: Task, *, blocked_networks: Sequence[Network] = ()) -> Outcome:
    """Poll the task's target with its kind's blocking driver, on this
    thread; never raises. Untrusted polls never connect to
    `blocked_networks`."""
    started_at = datetime.now(UTC)
    driver = driver_for(task.target.url)
    try:
        return driver(task, started_at, tuple(blocked_networks))
    except Exception as error:  # a driver check never raises; a last resort
        return crashed(task, error)


def crashed(task: Task, error: BaseException) -> Outcome:
    """The outcome of a poll that raised where nothing should: a failed
    poll, so that it is stored and counted like any other."""
    reason = unexpected(task.target, error)
    return outcome(task, datetime.now(UTC), Trace(), None, reason)
