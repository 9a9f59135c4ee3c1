"""API keys belong to a team: every existing key goes into the install's
first team (the "Default" 0027 made), then `team` becomes required."""

import django.db.models.deletion
import projects.models.teams
from django.db import migrations, models


def move_keys_into_first_team(apps, schema_editor):
    Team = apps.get_model("projects", "Team")
    ApiKey = apps.get_model("projects", "ApiKey")
    if not ApiKey.objects.filter(team=None).exists():
        return
    team = Team.objects.order_by("pk").first()
    if team is None:
        team = Team.objects.create(name="Default", slug="default", trusted=True)
    ApiKey.objects.filter(team=None).update(team=team)


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0026_regions"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.RunPython(move_keys_into_first_team, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apikey",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
    ]
