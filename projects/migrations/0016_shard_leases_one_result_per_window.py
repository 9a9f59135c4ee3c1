"""Shard leases for several pollers, and one result per project and window.

The unique (project, polled_at) index is built before the old index on the
same columns goes (the readers keep an index throughout) and takes its
place, so one result per window costs no disk.
"""

import django.db.models.deletion
import projects.models.indexes
from django.db import migrations, models

TABLE = "projects_pollresult"


def drop_duplicate_windows(apps, schema_editor):
    """Keep the first of several results of one project at one instant
    (possible before one result per window was enforced), so the unique
    index can be built."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"DELETE FROM {TABLE} a USING {TABLE} b WHERE a.project_id = "
            "b.project_id AND a.polled_at = b.polled_at AND a.id > b.id"
        )
    else:
        schema_editor.execute(
            f"DELETE FROM {TABLE} WHERE id NOT IN "
            f"(SELECT min(id) FROM {TABLE} GROUP BY project_id, polled_at)"
        )


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0015_rollup_maintenance'),
    ]

    operations = [
        migrations.CreateModel(
            name='ShardLease',
            fields=[
                ('shard', models.PositiveIntegerField(primary_key=True, serialize=False)),
                ('expires_at', models.DateTimeField(blank=True, null=True)),
                ('token', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AlterField(
            model_name='pollresult',
            name='polled_at',
            field=models.DateTimeField(help_text="The start of the window the poll was scheduled for (UTC); the request starts then, or as late as the poller's lag."),
        ),
        migrations.RunPython(drop_duplicate_windows, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='pollresult',
            index=projects.models.indexes.PackedIndex(fields=['project', 'polled_at'], name='pollresult_one_per_window', unique=True),
        ),
        migrations.RemoveIndex(
            model_name='pollresult',
            name='pollresult_project_latest',
        ),
        migrations.AddField(
            model_name='shardlease',
            name='owner',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='leases', to='projects.pollernode'),
        ),
    ]
