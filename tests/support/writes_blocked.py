"""Hold the poll results table from another connection, so that a writer's
batch waits, for as long as a test needs, at its first insert."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from django.db import connection

from tests.support.processes import database_url


@contextlib.contextmanager
def results_blocked() -> Iterator[None]:
    """Until the block ends, no connection can write a result: on
    PostgreSQL the table is locked (reads go on); on SQLite the database's
    write lock is taken (a writer waits up to its busy timeout, 10 s)."""
    if connection.vendor == "postgresql":
        import psycopg

        with psycopg.connect(database_url()) as other:
            other.execute("LOCK TABLE projects_pollresult IN EXCLUSIVE MODE")
            yield
        return
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("COMMIT")
    finally:
        other.close()
