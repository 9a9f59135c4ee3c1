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


def primary_key_index() -> str:
    if connection.vendor == "postgresql":
        return "projects_pollresult_pkey"
    return "sqlite_autoindex_projects_pollresult_1"


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
    assert names == {
        "projects_pollresult",
        primary_key_index(),
        "pollresult_polled_at",
        "pollresult_project_down",
    }
    assert [r.kind for r in storage.relations].count("table") == 1
    # Floats summed in another order may differ in the last bit.
    parts = sum(storage.per_row(r) for r in storage.relations)
    assert storage.bytes_per_row == pytest.approx(parts)
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
    assert f"index {primary_key_index()}:" in report
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
    key = index_definition("projects_pollresult_pkey")
    assert key.startswith("CREATE UNIQUE INDEX")
    # One result per project, window and region (docs/regions.md).
    assert "btree (project_id, polled_at, region_id)" in key
    assert "fillfactor=100" in key
    assert "USING brin (polled_at)" in index_definition("pollresult_polled_at")


@postgresql_only
@pytest.mark.django_db
def test_on_postgresql_a_polls_columns_leave_no_padding():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.attname, t.typlen, a.attnotnull FROM pg_attribute a "
            "JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE a.attrelid = 'projects_pollresult'::regclass AND a.attnum > 0 "
            "AND NOT a.attisdropped ORDER BY a.attnum"
        )
        columns = cursor.fetchall()
    # Widest first, variable-length (-1) last: no column waits for alignment.
    # But the columns added later are appended, since placing them among
    # the fixed-width columns would rewrite a table of every poll ever kept:
    # region_id (0026_regions; at most one byte of padding after the
    # message), then the nullable columns of later check kinds, NULL (so no
    # room at all) in the polls of every other kind.
    names = [name for name, _, _ in columns]
    first_added = names.index("region_id")
    original, added = columns[:first_added], columns[first_added:]
    lengths = [length if length > 0 else 0 for _, length, _ in original]
    assert lengths == sorted(lengths, reverse=True)
    assert names[:2] == ["project_id", "polled_at"]
    assert {name for name, _, _ in added} == {
        "region_id",
        "rtt_min_us",
        "rtt_avg_us",
        "rtt_max_us",
        "loss_percent",
        "steps",
    }
    assert [name for name, _, not_null in added if not_null] == ["region_id"]


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
    assert "Index Scan Backward using projects_pollresult_pkey" in plan
    assert "Sort" not in plan


@postgresql_only
@pytest.mark.django_db
def test_on_postgresql_the_tables_updated_every_poll_leave_room_for_hot_updates():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname IN "
            "('projects_project', 'projects_hourlyrollup') ORDER BY relname"
        )
        options = dict(cursor.fetchall())
    assert options == {
        "projects_hourlyrollup": ["fillfactor=70"],
        "projects_project": ["fillfactor=50"],
    }
