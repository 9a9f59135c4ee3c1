"""PollResult's rows, smaller: keyed by (project, polled_at), no id, and
the status in a boolean.

The unique (project, polled_at) index was already the table's real key;
making it the primary key drops the 8-byte id from every row and the id's
B-tree (about 20 bytes a poll on PostgreSQL). The status, `up` or `down`,
becomes the boolean column `up` (StatusField): one byte instead of three
to five. A column cannot simply be dropped: PostgreSQL keeps a dropped
column's slot in every row written later (a longer null bitmap, so a
longer header), so the table is built anew and the polls copied over in
time order (the order the BRIN index on polled_at wants). Reversible the
same way.

PollResultRow is the admin's unmanaged view of the same table (Django 5.2's
admin refuses composite primary keys).
"""

import projects.models.fields
from django.db import migrations, models

TABLE = "projects_pollresult"
OLD_TABLE = "projects_pollresult_old"
# Every index PollResult has had since 0016, before or after this one.
INDEXES = ("pollresult_polled_at", "pollresult_project_down", "pollresult_one_per_window")
# How a column of the new table is filled from the old one, where the two
# differ: the status as text (before) or as the boolean `up` (after).
CONVERTED = {
    "up": "status = 'up'",
    "status": "CASE WHEN up THEN 'up' ELSE 'down' END",
}
# PostgreSQL aligns each column to its type's size, so the order matters:
# 8-byte columns first, then 4, then 2, then 1 and the variable-length
# ones (no alignment) leave no padding inside a row. Django's CREATE TABLE
# would follow the fields' history (polled_at, status, ..., project_id,
# phases): 40 bytes of columns where these take 32, and a row of 32 bytes
# or less fits in 56 with its header, where 33 takes 64.
POSTGRESQL_TABLE = f"""
CREATE TABLE {TABLE} (
    project_id bigint NOT NULL
        REFERENCES projects_project (id) DEFERRABLE INITIALLY DEFERRED,
    polled_at timestamp with time zone NOT NULL,
    response_time_ms integer NULL
        CONSTRAINT {TABLE}_response_time_ms_check CHECK (response_time_ms >= 0),
    status_code smallint NULL
        CONSTRAINT {TABLE}_status_code_check CHECK (status_code >= 0),
    dns_ms smallint NULL
        CONSTRAINT {TABLE}_dns_ms_check CHECK (dns_ms >= 0),
    connect_ms smallint NULL
        CONSTRAINT {TABLE}_connect_ms_check CHECK (connect_ms >= 0),
    tls_ms smallint NULL
        CONSTRAINT {TABLE}_tls_ms_check CHECK (tls_ms >= 0),
    first_byte_ms smallint NULL
        CONSTRAINT {TABLE}_first_byte_ms_check CHECK (first_byte_ms >= 0),
    up boolean NOT NULL,
    error_message varchar(10240) NOT NULL,
    CONSTRAINT {TABLE}_pkey PRIMARY KEY (project_id, polled_at)
        WITH (fillfactor = 100)
)
"""


def rebuild(apps, schema_editor):
    """Build the table PollResult in `apps` describes and copy the polls
    into it."""
    model = apps.get_model("projects", "PollResult")
    quote = schema_editor.quote_name
    postgresql = schema_editor.connection.vendor == "postgresql"
    for index in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {quote(index)}")
    schema_editor.execute(f"ALTER TABLE {TABLE} RENAME TO {OLD_TABLE}")
    if postgresql:
        # Index names are per schema: the new table's key takes this name.
        schema_editor.execute(
            f"ALTER TABLE {OLD_TABLE} RENAME CONSTRAINT {TABLE}_pkey TO {OLD_TABLE}_pkey"
        )
    create_table(model, schema_editor)
    columns = [
        field.column
        for field in model._meta.local_concrete_fields
        if not isinstance(field, models.AutoField)
    ]
    targets = ", ".join(quote(column) for column in columns)
    sources = ", ".join(CONVERTED.get(column, quote(column)) for column in columns)
    schema_editor.execute(
        f"INSERT INTO {TABLE} ({targets}) SELECT {sources} FROM {OLD_TABLE} "
        "ORDER BY polled_at, project_id"
    )
    schema_editor.execute(f"DROP TABLE {OLD_TABLE}")
    if postgresql:
        # The copied rows' foreign key checks are deferred to the commit,
        # and PostgreSQL alters no table with checks pending.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # As 0012 and 0014 set them on the table this one replaces.
        schema_editor.execute(
            f"ALTER TABLE {TABLE} SET (autovacuum_vacuum_scale_factor = 0.01)"
        )
        schema_editor.execute(f"ALTER INDEX {TABLE}_pkey SET (fillfactor = 100)")
        # Filled in time order, each project's key pages split as the
        # poller's inserts do; rebuilt, they are packed.
        schema_editor.execute(f"REINDEX INDEX {TABLE}_pkey")


def create_table(model, schema_editor):
    if schema_editor.connection.vendor != "postgresql" or not model._meta.is_composite_pk:
        schema_editor.create_model(model)
        return
    schema_editor.execute(POSTGRESQL_TABLE)
    for index in model._meta.indexes:
        schema_editor.add_index(model, index)


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0016_shard_leases_one_result_per_window'),
    ]

    operations = [
        # Backwards, this runs last, with the id back in the state.
        migrations.RunPython(migrations.RunPython.noop, rebuild),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='PollResultRow',
                    fields=[
                        ('status', projects.models.fields.StatusField(choices=[('up', 'Up'), ('down', 'Down')], db_column='up', max_length=4)),
                        ('status_code', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('response_time_ms', models.PositiveIntegerField(blank=True, null=True)),
                        ('error_message', models.CharField(blank=True, help_text='Why the poll failed, or the body a ping sent.', max_length=10240, verbose_name='error or message')),
                        ('dns_ms', models.PositiveSmallIntegerField(blank=True, null=True, verbose_name='DNS (ms)')),
                        ('connect_ms', models.PositiveSmallIntegerField(blank=True, null=True, verbose_name='connect (ms)')),
                        ('tls_ms', models.PositiveSmallIntegerField(blank=True, null=True, verbose_name='TLS (ms)')),
                        ('first_byte_ms', models.PositiveSmallIntegerField(blank=True, help_text="From the request sent to the response's first byte.", null=True, verbose_name='first byte (ms)')),
                        ('polled_at', models.DateTimeField(help_text="The start of the window the poll was scheduled for (UTC); the request starts then, or as late as the poller's lag.", primary_key=True, serialize=False)),
                    ],
                    options={
                        'verbose_name': 'poll result',
                        'db_table': 'projects_pollresult',
                        'managed': False,
                    },
                ),
                migrations.RemoveIndex(
                    model_name='pollresult',
                    name='pollresult_project_down',
                ),
                migrations.AlterField(
                    model_name='pollresult',
                    name='status',
                    field=projects.models.fields.StatusField(choices=[('up', 'Up'), ('down', 'Down')], db_column='up', max_length=4),
                ),
                migrations.RemoveIndex(
                    model_name='pollresult',
                    name='pollresult_one_per_window',
                ),
                migrations.RemoveField(
                    model_name='pollresult',
                    name='id',
                ),
                migrations.AddField(
                    model_name='pollresult',
                    name='pk',
                    field=models.CompositePrimaryKey('project', 'polled_at', blank=True, editable=False, primary_key=True, serialize=False),
                ),
                migrations.AddIndex(
                    model_name='pollresult',
                    index=models.Index(condition=models.Q(('status', 'down')), fields=['project', 'polled_at'], name='pollresult_project_down'),
                ),
            ],
        ),
        # Forwards, this runs last, with the composite key in the state.
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
