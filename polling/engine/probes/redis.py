"""The Redis check (redis://, rediss:// over TLS): connect and log in
(`user:password@`, or `:password@`), select the database the path names,
then send the optional `?command=` (default PING) and compare the reply
with `?expect=`. Up when every step succeeds within the timeout; the
connect and command times are the poll's connect and first-byte phases.

redis-py speaks the protocol; its socket is opened here, to the address
resolved and checked against the blocked networks (drivers.py), and TLS
verifies the host name.
"""

from __future__ import annotations

import functools
import inspect
import shlex
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

SCHEMES = ("redis", "rediss")
DEFAULT_PORT = 6379


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """The check run here, blocking (probe()); the executor hands these
    polls to the side pool instead (engine/side_pool.py)."""
    return check(task, started_at, handle.blocked_networks)
    yield  # a generator that needs no exchange


def check(task: Task, started_at: datetime, networks: Sequence[Network]) -> Outcome:
    """One Redis check of the task's target; never raises."""
    import redis

    target = task.target
    timeout = target.timeout_seconds
    watch = Watch()
    point = None
    connection = None
    try:
        point = endpoint(target.url, DEFAULT_PORT)
        address = resolve(point, networks, trusted=target.trusted, watch=watch)
        command = shlex.split(
            point.params.get("command") or point.params.get("query") or "PING"
        )
        with watch.phase("connect"):
            connection = _pinned(redis)(
                **_without_client_info(redis),
                # RESP2, which every Redis speaks: redis-py 8 asks for RESP3
                # with a HELLO first, a round trip more and an error from a
                # Redis before 6.
                protocol=2,
                address=address,
                host=point.host,
                port=point.port,
                username=point.user or None,
                password=point.password or None,
                db=int(point.path or 0),
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                tls=point.scheme == "rediss",
            )
            connection.connect()
        with watch.phase("query"):
            connection.send_command(*command)
            reply = connection.read_response()
    except DriverFailed as failed:
        return watch.outcome(task, started_at, failed.reason)
    except (redis.RedisError, ValueError, OSError) as error:
        return watch.outcome(task, started_at, _reason(error, point, timeout))
    finally:
        if connection is not None:
            connection.disconnect()
    if isinstance(reply, list):
        reply = reply[0] if reply else None
    reason = expected_reason(point.params.get("expect"), reply)
    return watch.outcome(task, started_at, reason, _shown(reply))


@functools.cache
def _without_client_info(redis) -> dict:
    """The arguments that keep redis-py from sending CLIENT SETINFO on each
    connect: two more round trips, a failed call in the stats of a Redis
    before 7.2, and its own version read from the package's metadata each
    time (a third of a check's CPU). Newer redis-py takes driver_info=None,
    older lib_name and lib_version (deprecated since)."""
    for kind in redis.Connection.__mro__:  # Connection passes **kwargs up
        init = vars(kind).get("__init__")
        if init and "driver_info" in inspect.signature(init).parameters:
            return {"driver_info": None}
    return {"lib_name": None, "lib_version": None}


@functools.cache
def _pinned(redis):
    """A redis-py Connection whose socket goes to the address given (one
    class, made on the first check)."""

    class Pinned(redis.Connection):
        def __init__(self, *, address: str, tls: bool, **options) -> None:
            super().__init__(**options)
            self._address = address
            self._tls = tls

        def _connect(self):
            sock = open_socket(self._address, self.port, self.socket_connect_timeout)
            if self._tls:
                context = verified_tls_context()
                try:
                    sock = context.wrap_socket(sock, server_hostname=self.host)
                except ssl.SSLError as error:
                    sock.close()
                    raise DriverFailed(f"TLS error: {error.reason or error}") from None
                except OSError:
                    sock.close()
                    raise
            sock.settimeout(self.socket_timeout)
            return sock

    return Pinned


def _reason(error: Exception, point, timeout: float) -> str:
    if isinstance(error.__cause__, DriverFailed):
        return error.__cause__.reason
    text = str(error)
    if "Timeout" in type(error).__name__ or "timed out" in text.lower():
        return timed_out(timeout)
    if isinstance(error, ValueError):
        return "invalid URL: the database must be a number"
    return f"Redis: {masked(text, point) if point else text}"


def _shown(reply: object) -> str:
    if isinstance(reply, bytes):
        return reply.decode(errors="replace")
    return "" if reply is None else str(reply)
