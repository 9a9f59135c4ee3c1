"""The hourly rollups' histogram becomes text the writer appends codes to
(projects.models.fields.BucketCodesField): merging JSON objects in SQL made
the writer's cost per poll rise by a third (bench/bench_rollup_histograms.py).

The JSON column is renamed, a text one added, each stored histogram
written as its codes, and the JSON column dropped. The daily rollups keep
their JSON histogram."""

from django.db import migrations

import projects.models.fields

BATCH = 2000


def to_codes(apps, schema_editor):
    HourlyRollup = apps.get_model("projects", "HourlyRollup")
    rows = (
        HourlyRollup.objects.exclude(histogram_json={})
        .values_list("pk", "histogram_json")
        .order_by("pk")
    )
    changed = []
    for pk, counts in rows.iterator(chunk_size=BATCH):
        changed.append(HourlyRollup(pk=pk, histogram=counts))
        if len(changed) == BATCH:
            HourlyRollup.objects.bulk_update(changed, ["histogram"])
            changed = []
    HourlyRollup.objects.bulk_update(changed, ["histogram"])


def to_json(apps, schema_editor):
    HourlyRollup = apps.get_model("projects", "HourlyRollup")
    rows = HourlyRollup.objects.exclude(histogram="").values_list("pk", "histogram")
    changed = []
    for pk, counts in rows.order_by("pk").iterator(chunk_size=BATCH):
        changed.append(HourlyRollup(pk=pk, histogram_json=counts))
        if len(changed) == BATCH:
            HourlyRollup.objects.bulk_update(changed, ["histogram_json"])
            changed = []
    HourlyRollup.objects.bulk_update(changed, ["histogram_json"])


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0036_merge_this_turns_work"),
    ]

    operations = [
        migrations.RenameField(
            model_name="hourlyrollup", old_name="histogram", new_name="histogram_json"
        ),
        migrations.AddField(
            model_name="hourlyrollup",
            name="histogram",
            field=projects.models.fields.BucketCodesField(
                blank=True, db_default="", default=dict
            ),
        ),
        migrations.RunPython(to_codes, to_json),
        migrations.RemoveField(model_name="hourlyrollup", name="histogram_json"),
    ]
