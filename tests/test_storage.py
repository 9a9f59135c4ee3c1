"""PollResult on disk: storage_report's figures and the indexes' layout."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest

from django.core.management import call_command
from django.db import connection, transaction

from projects.housekeeping.storage import table_storage, vacuum
from projects.models import PollResult

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
postgresql_only = pytest.mark.skipif(
    "connection.vendor != 'postgresql'", reason="PostgreSQL only"
)


@pytest.fixture
def polls(make_project, add_polls):
    projects = [make_project(), make_project()]
    for project in projects:
        add_polls(project, "u" * 300 + "d" * 20, end=NOW)
    return projects


@pytest.mark.django_db(transaction=True)
def test_bytes_per_row_add_up_over_the_table_and_its_indexes(polls):
    vacuum(PollResult)
    storage = table_storage(PollResult)
    names = {r.name for r in storage.relations}
    assert storage.rows == 640
    assert {"pollresult_one_per_window", "pollresult_project_down"} <= names
    assert [r.kind for r in storage.relations].count("table") == 1
    assert storage.bytes_per_row == sum(storage.per_row(r) for r in storage.relations)
    assert storage.bytes_per_row > 30


@pytest.mark.django_db
def test_an_empty_table_has_no_bytes_per_row():
    assert table_storage(PollResult).bytes_per_row is None


@pytest.mark.django_db
def test_storage_report_prints_each_table_and_index(polls):
    out = StringIO()
    call_command("storage_report", stdout=out)
    report = out.getvalue()
    assert "projects_pollresult: 640 rows" in report
    assert "index pollresult_one_per_window:" in report
    assert "projects_dailyrollup: 0 rows" in report


def index_definition(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_indexdef(c.oid) || coalesce(' ' || c.reloptions::text, '')"
            " FROM pg_class c WHERE c.relname = %s",
            [name],
        )
        return cursor.fetchone()[0]


@postgresql_only
@pytest.mark.django_db
def test_on_postgresql_the_poll_indexes_are_packed_and_brin():
    latest = index_definition("pollresult_one_per_window")
    assert latest.startswith("CREATE UNIQUE INDEX")
    assert "btree (project_id, polled_at)" in latest
    assert "fillfactor=100" in latest
    assert "USING brin (polled_at)" in index_definition("pollresult_polled_at")
    assert "fillfactor=100" in index_definition("projects_pollresult_pkey")


@postgresql_only
@pytest.mark.django_db
def test_a_projects_latest_polls_are_read_from_its_index_backwards(polls):
    newest_first = polls[0].results.order_by("-polled_at")[:50]
    with transaction.atomic(), connection.cursor() as cursor:
        # Tiny tables are read whole; the question is whether the index
        # serves the order.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        plan = newest_first.explain()
    assert "Index Scan Backward using pollresult_one_per_window" in plan
    assert "Sort" not in plan
