"""Migrations that change existing data keep its meaning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.support.migrations import migrate_to

BEFORE_RANGES = ("projects", "0006_channel_deliverer_wakes_at")
WITH_RANGES = ("projects", "0007_richer_checks")


@pytest.mark.django_db(transaction=True)
def test_expected_status_codes_keep_their_values():
    old_apps = migrate_to(BEFORE_RANGES)
    OldProject = old_apps.get_model("projects", "Project")
    for number, code in enumerate([200, 204, 301, 503]):
        OldProject.objects.create(
            name=f"p{number}", url="http://127.0.0.1:9/", expected_status=code
        )
    try:
        new_apps = migrate_to(WITH_RANGES)
        Project = new_apps.get_model("projects", "Project")
        stored = sorted(Project.objects.values_list("expected_status", flat=True))
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("projects")
        migrate_to(leaf[0])

    assert stored == ["200", "204", "301", "503"]


BEFORE_COMPOSITE_KEY = ("projects", "0016_shard_leases_one_result_per_window")
COMPOSITE_KEY = ("projects", "0017_pollresult_smaller_rows")


def poll_rows(apps) -> list[tuple]:
    PollResult = apps.get_model("projects", "PollResult")
    return list(
        PollResult.objects.order_by("project_id", "polled_at").values_list(
            "project_id",
            "polled_at",
            "status",
            "status_code",
            "error_message",
            "tls_ms",
        )
    )


@pytest.mark.django_db(transaction=True)
def test_polls_keep_their_values_when_the_id_goes_and_comes_back():
    old_apps = migrate_to(BEFORE_COMPOSITE_KEY)
    OldProject = old_apps.get_model("projects", "Project")
    OldResult = old_apps.get_model("projects", "PollResult")
    projects = [
        OldProject.objects.create(name=f"p{n}", url="http://127.0.0.1:9/")
        for n in range(2)
    ]
    start = datetime(2026, 11, 1, tzinfo=UTC)
    for minute in range(3):
        for project in projects:
            OldResult.objects.create(
                project=project,
                polled_at=start + timedelta(minutes=minute),
                status="down" if minute == 1 else "up",
                status_code=None if minute == 1 else 200,
                error_message="refused" if minute == 1 else "",
                tls_ms=minute or None,
            )
    before = poll_rows(old_apps)
    try:
        keyed = poll_rows(migrate_to(COMPOSITE_KEY))
        back_apps = migrate_to(BEFORE_COMPOSITE_KEY)
        back = poll_rows(back_apps)
        ids = sorted(
            back_apps.get_model("projects", "PollResult").objects.values_list(
                "id", flat=True
            )
        )
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("projects")
        migrate_to(leaf[0])

    assert len(before) == 6
    assert keyed == before
    assert back == before
    assert len(set(ids)) == 6


JSON_HOURLY_HISTOGRAMS = ("projects", "0036_merge_this_turns_work")
CODED_HOURLY_HISTOGRAMS = ("projects", "0037_writercost_hourly_histogram_codes")


def hourly_histograms(apps, field: str = "histogram") -> dict:
    HourlyRollup = apps.get_model("projects", "HourlyRollup")
    return dict(HourlyRollup.objects.values_list("project__name", field))


@pytest.mark.django_db(transaction=True)
def test_hourly_histograms_keep_their_counts_as_codes_and_back():
    old_apps = migrate_to(JSON_HOURLY_HISTOGRAMS)
    try:
        # Rows made with the old models alone: the current Team model (a
        # project's default team) has columns this schema has not.
        team = old_apps.get_model("projects", "Team").objects.create(
            name="Old", slug="old"
        )
        OldProject = old_apps.get_model("projects", "Project")
        OldHourly = old_apps.get_model("projects", "HourlyRollup")
        stored = {"counted": {"0": 1, "120": 3, "529": 2}, "empty": {}}
        for name, counts in stored.items():
            OldHourly.objects.create(
                project=OldProject.objects.create(
                    name=name, url="http://127.0.0.1:9/", team=team
                ),
                hour=datetime(2026, 11, 1, tzinfo=UTC),
                polls=sum(counts.values()),
                histogram=counts,
            )
        coded_apps = migrate_to(CODED_HOURLY_HISTOGRAMS)
        coded = hourly_histograms(coded_apps)
        with connection.cursor() as cursor:
            cursor.execute("SELECT histogram FROM projects_hourlyrollup")
            texts = sorted(text for (text,) in cursor.fetchall())
        back = hourly_histograms(migrate_to(JSON_HOURLY_HISTOGRAMS))
    finally:
        # Always back to the newest schema: the next tests of this worker
        # share its database.
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("projects")
        migrate_to(leaf[0])

    assert coded == stored
    assert sorted(len(text) for text in texts) == [0, 12]
    assert back == stored
