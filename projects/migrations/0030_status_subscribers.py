"""Status page subscribers (issue #29's leftovers): Incident.updated_at,
which a status page's version reads, so a manual incident's new title
shows on the next request; and the announcer's high-water mark."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0029_incident_acknowledged_by_key"),
    ]

    operations = [
        migrations.AddField(
            model_name="incident",
            name="updated_at",
            field=models.DateTimeField(
                auto_now=True, default=django.utils.timezone.now
            ),
            preserve_default=False,
        ),
        migrations.CreateModel(
            name="AnnouncementCursor",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                ("name", models.CharField(max_length=40, unique=True)),
                ("position", models.DateTimeField()),
            ],
        ),
    ]
