"""PollResult's indexes packed tighter (PostgreSQL only; SQLite unchanged).

pollresult_project_latest becomes ascending and both it and the primary key
fill their pages to 100 %: see projects.models.indexes.PackedIndex. The
primary key's new fillfactor applies to pages split from now on.
"""

from django.db import migrations

import projects.models.indexes

TABLE = "projects_pollresult"


def primary_key_fillfactor(value):
    def alter(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexrelid::regclass::text FROM pg_index "
                "WHERE indrelid = %s::regclass AND indisprimary",
                [TABLE],
            )
            (name,) = cursor.fetchone()
        schema_editor.execute(f"ALTER INDEX {name} SET (fillfactor = {value})")

    return alter


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0013_poll_phases_certificate_expiry"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="pollresult",
            name="pollresult_project_latest",
        ),
        migrations.AddIndex(
            model_name="pollresult",
            index=projects.models.indexes.PackedIndex(
                fields=["project", "polled_at"], name="pollresult_project_latest"
            ),
        ),
        migrations.RunPython(primary_key_fillfactor(100), primary_key_fillfactor(90)),
    ]
