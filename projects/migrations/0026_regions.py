"""Regions (docs/regions.md): where pollers check from, and an outage
confirmed only when enough of them agree.

- Region, with its first row `default` (id 1): every poller, lease and
  result so far is of it, and single-region installs never name another.
- PollerNode.region; ShardLease per (region, shard). Lease rows hold no
  history (runpoller makes them at start), so the table is made anew.
- PollResult.region, a smallint, and the primary key (project, polled_at,
  region): one result per project, window and region. On PostgreSQL the
  column is added with a constant default (no rewrite) and the key
  rebuilt; SQLite copies the table, as it must to change a key.
- Project.regions and Project.quorum; ProjectRegionState, each region's
  view of each project, kept by the writer.
"""

import re

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

TABLE = "projects_pollresult"
OLD_TABLE = "projects_pollresult_old"
INDEXES = ("pollresult_polled_at", "pollresult_project_down")


def create_default_region(apps, schema_editor):
    Region = apps.get_model("projects", "Region")
    region = Region.objects.create(name="default")
    assert region.pk == 1, "the default region must be the first"


def add_region_to_results(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE {TABLE} ADD COLUMN region_id smallint NOT NULL DEFAULT 1 "
            "REFERENCES projects_region (id) DEFERRABLE INITIALLY DEFERRED"
        )
        schema_editor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN region_id DROP DEFAULT")
        schema_editor.execute(
            f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, "
            f"ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (project_id, polled_at, region_id) "
            "WITH (fillfactor = 100)"
        )
        return
    model = apps.get_model("projects", "PollResult")
    quote = schema_editor.quote_name
    for index in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {quote(index)}")
    schema_editor.execute(f"ALTER TABLE {TABLE} RENAME TO {OLD_TABLE}")
    schema_editor.create_model(model)
    columns = [f.column for f in model._meta.local_concrete_fields if f.column != "region_id"]
    names = ", ".join(quote(c) for c in columns)
    schema_editor.execute(
        f"INSERT INTO {TABLE} ({names}, region_id) SELECT {names}, 1 FROM {OLD_TABLE}"
    )
    schema_editor.execute(f"DROP TABLE {OLD_TABLE}")


def remove_region_from_results(apps, schema_editor):
    schema_editor.execute(f"DELETE FROM {TABLE} WHERE region_id <> 1")
    if schema_editor.connection.vendor != "postgresql":
        _sqlite_without_region(schema_editor)
        return
    schema_editor.execute(
        f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, "
        f"ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (project_id, polled_at)"
    )
    schema_editor.execute(f"ALTER TABLE {TABLE} DROP COLUMN region_id")


def _sqlite_without_region(schema_editor):
    """SQLite changes no key in place: the table is made again from its own
    definition, less the region."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [TABLE])
        (create,) = cursor.fetchone()
        cursor.execute("SELECT sql FROM sqlite_master WHERE tbl_name = %s AND type = 'index' AND sql IS NOT NULL", [TABLE])
        indexes = [row[0] for row in cursor.fetchall()]
    create = re.sub(r', "region_id" [^,]*?DEFERRED', "", create)
    create = create.replace(', "region_id")', ")")
    for index in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{index}"')
    schema_editor.execute(f"ALTER TABLE {TABLE} RENAME TO {OLD_TABLE}")
    schema_editor.execute(create.replace(f'"{TABLE}"', TABLE, 1))
    columns = ", ".join(
        f'"{c}"' for c in re.findall(r'"(\w+)" [a-z]', create) if c != "region_id"
    )
    schema_editor.execute(
        f"INSERT INTO {TABLE} ({columns}) SELECT {columns} FROM {OLD_TABLE}"
    )
    schema_editor.execute(f"DROP TABLE {OLD_TABLE}")
    for sql in indexes:
        schema_editor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ("projects", "0027_teams"),
    ]

    operations = [
        migrations.CreateModel(
            name="Region",
            fields=[
                ("id", models.SmallAutoField(primary_key=True, serialize=False)),
                ("name", models.CharField(max_length=50, unique=True)),
                ("label", models.CharField(blank=True, max_length=200)),
                ("last_seen_at", models.DateTimeField(blank=True, help_text="The latest heartbeat of a poller in it.", null=True)),
                ("blind_since", models.DateTimeField(blank=True, editable=False, null=True)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.RunPython(create_default_region, migrations.RunPython.noop),
        migrations.AddField(
            model_name="pollernode",
            name="region",
            field=models.ForeignKey(default=1, on_delete=django.db.models.deletion.PROTECT, related_name="pollers", to="projects.region"),
        ),
        migrations.DeleteModel(name="ShardLease"),
        migrations.CreateModel(
            name="ShardLease",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("shard", models.PositiveIntegerField()),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("token", models.BigIntegerField(default=0)),
                ("owner", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="leases", to="projects.pollernode")),
                ("region", models.ForeignKey(default=1, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="projects.region")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("region", "shard"), name="shardlease_one_per_region_shard")],
            },
        ),
        migrations.AddField(
            model_name="project",
            name="regions",
            field=models.ManyToManyField(blank=True, help_text="Regions that poll it; none: every region with live pollers.", related_name="projects", to="projects.region"),
        ),
        migrations.AddField(
            model_name="project",
            name="quorum",
            field=models.PositiveSmallIntegerField(blank=True, help_text="How many of its polling regions must confirm a failure before it is down; empty: a majority.", null=True, validators=[django.core.validators.MinValueValidator(1)]),
        ),
        migrations.CreateModel(
            name="ProjectRegionState",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("state", models.CharField(blank=True, max_length=7)),
                ("consecutive_failures", models.PositiveIntegerField(default=0)),
                ("consecutive_successes", models.PositiveIntegerField(default=0)),
                ("failing_since", models.DateTimeField(blank=True, null=True)),
                ("last_polled_at", models.DateTimeField(blank=True, null=True)),
                ("last_up", models.BooleanField(null=True)),
                ("last_status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("last_response_time_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, max_length=1000)),
                ("project", models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="region_states", to="projects.project")),
                ("region", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="projects.region")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("project", "region"), name="projectregionstate_one_per_pair")],
            },
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="pollresult",
                    name="region",
                    field=models.ForeignKey(db_index=False, default=1, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="projects.region"),
                ),
                migrations.AlterField(
                    model_name="pollresult",
                    name="pk",
                    field=models.CompositePrimaryKey("project", "polled_at", "region", blank=True, editable=False, primary_key=True, serialize=False),
                ),
            ],
        ),
        # With the region and the new key in the state.
        migrations.RunPython(add_region_to_results, remove_region_from_results),
        # A region's own outages: one open per kind and region.
        migrations.RemoveConstraint(
            model_name="monitoroutage",
            name="monitoroutage_one_open_per_kind",
        ),
        migrations.AddField(
            model_name="monitoroutage",
            name="region",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="outages", to="projects.region"),
        ),
        migrations.AlterField(
            model_name="monitoroutage",
            name="kind",
            field=models.CharField(choices=[("unreachable", "Most targets unreachable"), ("poller_silent", "Poller silent"), ("region_dark", "Region without a live poller"), ("region_blind", "Region cannot reach most targets")], max_length=13),
        ),
        migrations.AddConstraint(
            model_name="monitoroutage",
            constraint=models.UniqueConstraint(condition=models.Q(("ended_at__isnull", True), ("region__isnull", True)), fields=("kind",), name="monitoroutage_one_open_per_kind"),
        ),
        migrations.AddConstraint(
            model_name="monitoroutage",
            constraint=models.UniqueConstraint(condition=models.Q(("ended_at__isnull", True), ("region__isnull", False)), fields=("kind", "region"), name="monitoroutage_one_open_per_region"),
        ),
    ]
