"""The PostgreSQL check: connect (and log in) with psycopg, then run the
optional `?query=` and compare its first value with `?expect=`. Up when
every step succeeds within the timeout; the connect and query times are
the poll's connect and first-byte phases.

`?sslmode=` is libpq's (default prefer); the address connected to is the
one resolved and checked against the blocked networks (drivers.py), the
host name is what TLS verifies. Nothing is read from the environment or
a password file: what the URL says is all the driver gets.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from datetime import datetime
from typing import Any

from polling.engine.blocked import Network
from polling.engine.probes.drivers import (
    DriverFailed,
    Watch,
    endpoint,
    expected_reason,
    masked,
    resolve,
)
from polling.engine.reasons import timed_out
from polling.engine.transport import Exchange, Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("postgres", "postgresql")
DEFAULT_PORT = 5432
# libpq refuses a connect timeout under 2 s; the side pool's deadline
# still holds a shorter one.
MIN_CONNECT_TIMEOUT = 2


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """The check run here, blocking (probe()); the executor hands these
    polls to the side pool instead (engine/side_pool.py)."""
    return check(task, started_at, handle.blocked_networks)
    yield  # a generator that needs no exchange


def check(task: Task, started_at: datetime, networks: Sequence[Network]) -> Outcome:
    """One PostgreSQL check of the task's target; never raises."""
    import psycopg

    target = task.target
    watch = Watch()
    point = None
    try:
        point = endpoint(target.url, DEFAULT_PORT)
        address = resolve(point, networks, trusted=target.trusted, watch=watch)
        with watch.phase("connect"):
            connection = psycopg.connect(**_conninfo(point, address, target))
        with connection:
            version = connection.info.parameter_status("server_version") or ""
            reason = _query(connection, point, watch)
    except DriverFailed as failed:
        return watch.outcome(task, started_at, failed.reason)
    except psycopg.Error as error:
        return watch.outcome(task, started_at, _reason(error, point, target))
    return watch.outcome(task, started_at, reason, f"PostgreSQL {version}".strip())


def _conninfo(point, address: str, target) -> dict:
    timeout_ms = round(target.timeout_seconds * 1000)
    return {
        "host": point.host,
        "hostaddr": address,
        "port": point.port,
        "user": point.user or "postgres",
        "password": point.password,
        "dbname": point.path or point.user or "postgres",
        # No ~/.pgpass: a password the URL does not give is none at all.
        "passfile": "/nonexistent/.pgpass",
        "sslmode": point.params.get("sslmode", "prefer"),
        "connect_timeout": max(MIN_CONNECT_TIMEOUT, math.ceil(target.timeout_seconds)),
        "application_name": "uptime-monitor",
        "options": f"-c statement_timeout={timeout_ms}",
        "autocommit": True,
    }


def _query(connection, point, watch: Watch) -> str:
    query = point.params.get("query")
    if not query:
        return ""
    with watch.phase("query"):
        row = connection.execute(query).fetchone()
    return expected_reason(point.params.get("expect"), row[0] if row else None)


def _reason(error: Exception, point, target) -> str:
    text = str(error)
    if "timeout expired" in text or "statement timeout" in text:
        return timed_out(target.timeout_seconds)
    if "Connection refused" in text:
        return "connection refused"
    if "server closed the connection unexpectedly" in text:
        return "PostgreSQL: the server closed the connection"
    # libpq: 'connection failed: connection to server at "127.0.0.1", port
    # 5432 failed: FATAL:  password authentication failed for user "x"'
    if "FATAL:" in text:
        detail = text.rpartition("FATAL:")[2]
    else:
        detail = text.rpartition(" failed: ")[2]
    return f"PostgreSQL: {masked(detail, point) if point else detail}"
