"""Autovacuum for PollResult, tuned for hourly retention (PostgreSQL only).

Pruning deletes about 1/720 of the table every hour. At the default scale
factor (VACUUM once 20 % of the rows are dead) about six days of deleted
polls would wait for VACUUM to free their space, and the BRIN ranges that
pruning desummarizes would be read by every time-range scan meanwhile; at
1 % VACUUM follows within hours.
"""

from django.db import migrations

TABLE = "projects_pollresult"


def tune(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE {TABLE} SET (autovacuum_vacuum_scale_factor = 0.01)"
        )


def untune(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} RESET (autovacuum_vacuum_scale_factor)")


class Migration(migrations.Migration):
    dependencies = [("projects", "0011_daily_rollups_housekeeping_smaller_polls")]

    operations = [migrations.RunPython(tune, untune)]
