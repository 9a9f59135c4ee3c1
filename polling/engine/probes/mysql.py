"""The MySQL and MariaDB check: connect (and log in) with PyMySQL, then
run the optional `?query=` and compare its first value with `?expect=`.
Up when every step succeeds within the timeout; the connect and query
times are the poll's connect and first-byte phases.

`?ssl=true` asks for TLS, verified against the host name. The socket is
opened here, to the address resolved and checked against the blocked
networks (drivers.py), and handed to the driver.
"""

from __future__ import annotations

import ssl
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
    open_socket,
    resolve,
    verified_tls_context,
)
from polling.engine.reasons import timed_out
from polling.engine.transport import Exchange, Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("mysql",)
DEFAULT_PORT = 3306
TRUE = ("1", "true", "yes", "on", "required")


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """The check run here, blocking (probe()); the executor hands these
    polls to the side pool instead (engine/side_pool.py)."""
    return check(task, started_at, handle.blocked_networks)
    yield  # a generator that needs no exchange


def check(task: Task, started_at: datetime, networks: Sequence[Network]) -> Outcome:
    """One MySQL check of the task's target; never raises."""
    import pymysql

    target = task.target
    timeout = target.timeout_seconds
    watch = Watch()
    point = None
    try:
        point = endpoint(target.url, DEFAULT_PORT)
        address = resolve(point, networks, trusted=target.trusted, watch=watch)
        with watch.phase("connect"):
            sock = open_socket(address, point.port, timeout)
            connection = pymysql.connect(
                host=point.host,
                port=point.port,
                user=point.user or "root",
                password=point.password,
                database=point.path or None,
                connect_timeout=timeout,
                read_timeout=timeout,
                write_timeout=timeout,
                ssl=_tls(point),
                charset="utf8mb4",
                defer_connect=True,
            )
            try:
                connection.connect(sock)
            except BaseException:
                sock.close()
                raise
        with connection:
            version = connection.get_server_info()
            reason = _query(connection, point, watch)
    except DriverFailed as failed:
        return watch.outcome(task, started_at, failed.reason)
    except pymysql.MySQLError as error:
        return watch.outcome(task, started_at, _reason(error, point, timeout))
    return watch.outcome(task, started_at, reason, f"MySQL {version}")


def _tls(point) -> ssl.SSLContext | None:
    if point.params.get("ssl", "").lower() not in TRUE:
        return None
    return verified_tls_context()


def _query(connection, point, watch: Watch) -> str:
    query = point.params.get("query")
    if not query:
        return ""
    with watch.phase("query"), connection.cursor() as cursor:
        cursor.execute(query)
        row = cursor.fetchone()
    return expected_reason(point.params.get("expect"), row[0] if row else None)


def _reason(error: Exception, point, timeout: float) -> str:
    code, message = (*error.args, None, "")[:2]
    text = str(message or error)
    if "timed out" in text:
        return timed_out(timeout)
    if isinstance(code, int) and code >= 2000 and "Lost connection" in text:
        return "MySQL: the server closed the connection"
    return f"MySQL: {masked(text, point) if point else text}"
