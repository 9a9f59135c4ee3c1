"""The plain values the poller's threads pass to each other.

Nothing here imports Django, so the engine can be tested without a database.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

# Accepted status codes as (low, high) pairs, both included.
StatusRanges = tuple[tuple[int, int], ...]
OK_STATUS: StatusRanges = ((200, 200),)


@dataclass(frozen=True, slots=True)
class Keyword:
    """Text the response body must contain, or must not."""

    text: str
    present: bool = True
    case_sensitive: bool = False


@dataclass(frozen=True, slots=True)
class JsonAssertion:
    """A JMESPath query into the JSON body and what its result must be:
    `operator` is one of ==, !=, <, >, contains; `expected` is a JSON value
    (a str, number, bool, None, list or dict)."""

    query: str
    operator: str
    expected: object = field(hash=False)  # lists and dicts do not hash


@dataclass(frozen=True, slots=True)
class HeaderAssertion:
    """A response header and what it must be: `operator` is one of exists,
    absent, ==, contains, regex; `value` is empty for exists and absent."""

    name: str
    operator: str
    value: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """One request of a flow and what its response must be; `captures`
    are (name, source) pairs: json:<JMESPath>, header:<Name>,
    regex:<pattern> or status (projects/checks/kinds/flow.py). The URL,
    header values and body may hold {{name}} and {{secrets.NAME}}."""

    name: str
    url: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    expected_status: StatusRanges = OK_STATUS
    keyword: Keyword | None = None
    json_assertions: tuple[JsonAssertion, ...] = ()
    # (header name, text its value must contain)
    header_rules: tuple[tuple[str, str], ...] = ()
    max_response_time_ms: int | None = None
    captures: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class StepRun:
    """What one step of a flow poll found; `excerpt` is the start of a
    failed step's response, its team's secrets masked."""

    name: str
    up: bool
    status_code: int | None = None
    response_time_ms: int | None = None
    error: str = ""
    dns_ms: int | None = None
    connect_ms: int | None = None
    tls_ms: int | None = None
    first_byte_ms: int | None = None
    excerpt: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    """Everything one poll of a project needs, frozen at load time.

    `problem`, when set, is why the project's stored settings cannot be
    polled; every poll then fails with it as the reason.
    """

    project_id: int
    url: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    expected_status: StatusRanges = OK_STATUS
    interval_seconds: float = 300
    timeout_seconds: float = 10
    follow_redirects: bool = True
    # Whether a redirect from https may lead to plain http.
    allow_insecure_redirects: bool = False
    verify_tls: bool = True
    # Its team is trusted: it may connect to POLL_BLOCKED_NETWORKS.
    trusted: bool = False
    max_response_time_ms: int | None = None
    keyword: Keyword | None = None
    json_assertion: JsonAssertion | None = None
    header_assertions: tuple[HeaderAssertion, ...] = ()
    # UDP and SSH: what is sent (UDP), and the text the reply or banner
    # must contain, or match as a regular expression.
    payload: bytes = b""
    expected_reply: str = ""
    expected_reply_regex: bool = False
    # DNS: the response code expected, the answers (as the record's text,
    # names absolute) and how they must match (any, all, exactly), and
    # whether the resolver's AD flag is required.
    dns_rcode: str = "NOERROR"
    dns_answers: tuple[str, ...] = ()
    dns_match: str = "any"
    dns_dnssec: bool = False
    # ICMP: echo requests per poll, and the loss that is still up.
    ping_count: int = 3
    ping_max_loss_percent: int = 66
    problem: str = ""
    # Heartbeat (push) projects are not polled: the scheduler checks, at
    # ping_deadline, that a ping came in (the store decides, in the database).
    heartbeat: bool = False
    grace_seconds: float = 0
    ping_deadline: datetime | None = None  # wall clock, UTC
    # Consecutive failed polls that confirm an outage, and successful ones
    # that end it; until then the scheduler polls sooner (rechecks.py).
    failure_threshold: int = 1
    recovery_threshold: int = 1
    # Flows: their steps, run in order in one poll (engine/probes/flow.py),
    # and the team secrets those read, as (name, value): never logged or
    # shown (repr leaves them out), masked in what a poll stores.
    steps: tuple[Step, ...] = ()
    secrets: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # The window of its last stored result (wall clock, UTC), so a poller
    # taking the project over continues its cadence. Not part of what is
    # polled: a reload never counts it as a change.
    last_window: datetime | None = field(default=None, compare=False)

    @property
    def reads_body(self) -> bool:
        """Whether judging the poll needs the response body."""
        return self.keyword is not None or self.json_assertion is not None


@dataclass(frozen=True, slots=True)
class Task:
    """A poll that is due: the scheduler puts these on the task queue."""

    target: Target
    # The start of the window this poll is for (wall clock, UTC): exactly
    # the previous window plus the interval, so every poller computes the
    # same windows and the store keeps one result per project and window.
    due_at: datetime
    # An extra poll of a failing or recovering project, between its
    # regular ones.
    recheck: bool = False


@dataclass(frozen=True, slots=True)
class DeadlineMove:
    """A heartbeat project's deadline moving on. A ping sets it to `to`; a
    missed deadline moves it from `passed` to `to`, and counts only if the
    stored deadline is still `passed` or earlier (no ping came meanwhile,
    no other poller recorded the miss)."""

    to: datetime  # wall clock, UTC
    passed: datetime | None = None  # None for a ping


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one poll found. `error` is empty exactly when `up` is true.

    The phases are milliseconds spent on each step of the poll, summed over
    its redirects; None when the step did not happen (a reused connection
    needs no DNS, connect or TLS; plain http has no TLS; a poll that failed
    early never got a first byte). `tls_expires_at` is when the server's
    certificate expires, for https polls that got that far.
    """

    project_id: int
    up: bool
    started_at: datetime  # wall clock, UTC
    due_at: datetime  # wall clock, UTC
    status_code: int | None = None
    response_time_ms: int | None = None
    error: str = ""
    dns_ms: int | None = None
    connect_ms: int | None = None
    tls_ms: int | None = None
    # From the request sent to the first byte of the response: the server's
    # think time.
    first_byte_ms: int | None = None
    tls_expires_at: datetime | None = None  # wall clock, UTC
    # What the target said when it is not an error: a ping's body.
    message: str = ""
    deadline: DeadlineMove | None = None  # heartbeat projects only
    # Ping checks: the replies' round trips (min, avg, max) in microseconds,
    # and the share of echo requests lost.
    rtt_us: tuple[int, int, int] | None = None
    loss_percent: int | None = None
    steps: tuple[StepRun, ...] = ()  # flows only: each step run, in order

    @property
    def is_missed_ping(self) -> bool:
        return self.deadline is not None and self.deadline.passed is not None

    @property
    def lag_seconds(self) -> float:
        """How late the poll started: started minus due."""
        return (self.started_at - self.due_at).total_seconds()


class RunState(enum.Enum):
    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
