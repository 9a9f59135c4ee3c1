"""The writer's question while it backs off, "does the database answer
now?", on the real database: every way of being away gets a bounded no."""

from __future__ import annotations

import socket
import sqlite3

import pytest

from django.db import connection

from polling.database_probe import STEP_SECONDS, database_answers, open_probe
from polling.engine import writer as writer_module
from tests.support.fleet import needs_postgresql

pytestmark = pytest.mark.django_db

needs_sqlite = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="SQLite's own file and locks"
)


def test_the_database_answers():
    assert database_answers() is True


def test_both_steps_fit_in_the_writers_limit():
    # Connecting, then the query: the writer does not ask when its stop
    # deadline is nearer than that.
    assert 2 * STEP_SECONDS <= writer_module.PROBE_LIMIT_SECONDS


@needs_postgresql
def test_a_server_that_accepts_and_never_answers_gets_a_no(monkeypatch):
    # A listener nobody accepts from: the kernel completes the handshake,
    # the startup packet waits forever (psycopg's own default is 130 s).
    with socket.create_server(("127.0.0.1", 0)) as silent:
        monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
        monkeypatch.setitem(
            connection.settings_dict, "PORT", str(silent.getsockname()[1])
        )
        assert database_answers() is False


@needs_postgresql
def test_the_probes_query_is_cut_at_its_statement_timeout():
    import psycopg

    with open_probe() as probe:
        parameters = probe.info.get_parameters()
        assert parameters["connect_timeout"] == str(STEP_SECONDS)
        assert parameters["tcp_user_timeout"] == str(STEP_SECONDS * 1000)
        with pytest.raises(psycopg.errors.QueryCanceled):
            probe.execute("SELECT pg_sleep(60)")


@needs_postgresql
def test_nothing_listening_gets_a_no(monkeypatch):
    monkeypatch.setitem(connection.settings_dict, "PORT", "9")  # discard
    assert database_answers() is False


@needs_sqlite
def test_a_moved_database_gets_a_no_and_is_not_created(monkeypatch, tmp_path):
    moved = tmp_path / "moved.sqlite3"
    monkeypatch.setitem(connection.settings_dict, "NAME", str(moved))

    assert database_answers() is False
    assert moved.exists() is False


@needs_sqlite
def test_a_database_locked_by_another_connection_gets_a_no(monkeypatch, tmp_path):
    locked = tmp_path / "locked.sqlite3"
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setitem(connection.settings_dict, "NAME", str(locked))
    try:
        # After the probe's busy timeout, not the settings' 10 s.
        assert database_answers() is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert database_answers() is True
