"""Database maintenance beyond deleting old rows."""

from __future__ import annotations

from django.db import connection


def optimize_database() -> str:
    """Let SQLite refresh the statistics its query planner uses (PRAGMA
    optimize, run daily as SQLite recommends for long-lived databases).

    Nothing on PostgreSQL: autovacuum already analyzes tables as they
    change and reclaims the space of deleted rows, and a manual VACUUM or
    REINDEX of the largest table would only compete with the writer.
    Returns what it did, in words.
    """
    if connection.vendor != "sqlite":
        return "Nothing to do: autovacuum looks after PostgreSQL."
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA optimize")
    return "Ran PRAGMA optimize."
