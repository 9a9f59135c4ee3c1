"""Migrations that change existing data keep its meaning."""

from __future__ import annotations

import pytest

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_RANGES = ("projects", "0006_channel_deliverer_wakes_at")
WITH_RANGES = ("projects", "0007_richer_checks")


def migrate_to(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


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
