"""Whether the database answers now: the question the result writer asks
while it backs off from a failed save (polling/engine/writer.py), so that
its retry follows the database's return within a second rather than at
the end of a backoff of up to 30 s.

The question is asked on a connection of its own, opened and closed each
time, never on the thread's Django connection: a failed save left that one
broken, and it has no timeouts. Every step of the question is bounded, so
it ends within the writer's PROBE_LIMIT_SECONDS however the database is
away:

- PostgreSQL: psycopg's connect_timeout bounds the whole connection (TCP,
  startup, authentication), enforced by psycopg itself; the server's
  statement_timeout bounds SELECT 1, and tcp_user_timeout and keepalives
  a network that stops acknowledging it.
- SQLite: the busy timeout bounds the wait for a lock, and the file is
  opened read-write but never created (a moved database is not there,
  rather than empty).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db import connection

logger = logging.getLogger(__name__)

# The bound of each step (connecting, then the query): two of them fit in
# PROBE_LIMIT_SECONDS. 2 s is also the shortest connect_timeout libpq allows.
STEP_SECONDS = 2


def database_answers() -> bool:
    """Whether the database answers a trivial query, within the bounds
    above. False also for a database this cannot ask (another vendor)."""
    if connection.vendor not in _QUESTIONS:
        return False
    try:
        with open_probe() as probe:
            probe.execute(_QUESTIONS[connection.vendor]).fetchone()
        return True
    except connection.Database.Error as error:
        logger.debug("The database does not answer yet: %s", error)
        return False


@contextlib.contextmanager
def open_probe() -> Iterator[Any]:
    """A DB-API connection of its own to the database, with the bounds
    above, closed on leaving."""
    if connection.vendor == "postgresql":
        probe = _connect_postgresql()
    else:
        probe = _connect_sqlite()
    try:
        yield probe
    finally:
        probe.close()


def _connect_postgresql() -> Any:
    params = connection.get_connection_params()
    step_ms = STEP_SECONDS * 1000
    timeout = f"-c statement_timeout={step_ms}"
    return connection.Database.connect(
        **{
            **params,
            "autocommit": True,
            "connect_timeout": STEP_SECONDS,
            "options": " ".join(filter(None, [params.get("options"), timeout])),
            "tcp_user_timeout": step_ms,
            "keepalives": 1,
            "keepalives_idle": 1,
            "keepalives_interval": 1,
            "keepalives_count": 1,
        }
    )


def _connect_sqlite() -> sqlite3.Connection:
    name = str(connection.settings_dict["NAME"])
    if connection.is_in_memory_db():
        uri = name if name.startswith("file:") else "file::memory:"
    elif name.startswith("file:"):
        uri = name
    else:
        # Read-write, never create: a moved database is away, not empty.
        uri = f"{Path(name).resolve().as_uri()}?mode=rw"
    return sqlite3.connect(uri, uri=True, timeout=STEP_SECONDS)


# SELECT 1 would not open SQLite's file; the schema is in it.
_QUESTIONS = {
    "postgresql": "SELECT 1",
    "sqlite": "SELECT count(*) FROM sqlite_master",
}
