"""The database connection of a poller thread: telling a lost connection
from refused data, and closing or keeping it between pieces of work."""

from __future__ import annotations

import contextlib

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
)


def is_connection_error(error: BaseException) -> bool:
    """Whether the error says the database could not be reached or the
    connection was lost (or, on SQLite, the database was locked), as
    opposed to refusing the data."""
    driver = connection.Database
    return isinstance(
        error,
        OperationalError
        | InterfaceError
        | driver.OperationalError
        | driver.InterfaceError,
    )


def close_connection() -> None:
    """Close this thread's connection; threads call it before they end."""
    with contextlib.suppress(DatabaseError):
        connection.close()


def release_connection() -> None:
    """After a piece of work on a thread that lives on: keep this thread's
    connection for the next one, unless it failed or is older than
    CONN_MAX_AGE (as Django does at the end of a request)."""
    with contextlib.suppress(DatabaseError):
        connection.close_if_unusable_or_obsolete()
