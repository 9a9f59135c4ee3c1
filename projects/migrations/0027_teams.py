"""Teams and the audit log: a team "Default" gets every existing project,
tag, channel, maintenance window and status page, then `team` becomes
required."""

import django.db.models.deletion
import django.utils.timezone
import projects.models.teams
from django.conf import settings
from django.db import migrations, models


TEAM_OWNED = [
    "MaintenanceWindow",
    "NotificationChannel",
    "Project",
    "StatusPage",
    "Tag",
]


def move_everything_into_default_team(apps, schema_editor):
    Team = apps.get_model("projects", "Team")
    # Trusted: the install's own team keeps polling what it polled before.
    team, _ = Team.objects.get_or_create(
        slug="default", defaults={"name": "Default", "trusted": True}
    )
    for name in TEAM_OWNED:
        apps.get_model("projects", name).objects.filter(team=None).update(team=team)


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0025_ping_counts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Team",
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
                ("name", models.CharField(max_length=100, unique=True)),
                ("slug", models.SlugField(unique=True)),
                (
                    "trusted",
                    models.BooleanField(
                        default=False,
                        help_text="Its checks may reach the networks in POLL_BLOCKED_NETWORKS (cloud metadata, link-local). Only for a team that runs the install.",
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.AlterField(
            model_name="notificationchannel",
            name="name",
            field=models.CharField(max_length=200),
        ),
        migrations.AlterField(
            model_name="project",
            name="name",
            field=models.CharField(max_length=200),
        ),
        migrations.AlterField(
            model_name="tag",
            name="name",
            field=models.CharField(max_length=50),
        ),
        migrations.CreateModel(
            name="Membership",
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
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("viewer", "Viewer"),
                            ("editor", "Editor"),
                            ("manager", "Manager"),
                        ],
                        default="viewer",
                        max_length=7,
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "team",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to="projects.team",
                    ),
                ),
            ],
            options={
                "ordering": ["team__name", "user__username"],
            },
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AddField(
            model_name="notificationchannel",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AddField(
            model_name="tag",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AddField(
            model_name="statuspage",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.RunPython(
            move_everything_into_default_team, migrations.RunPython.noop
        ),
        migrations.AlterField(
            model_name="maintenancewindow",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AlterField(
            model_name="notificationchannel",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AlterField(
            model_name="tag",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AlterField(
            model_name="statuspage",
            name="team",
            field=models.ForeignKey(
                default=projects.models.teams.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.team",
            ),
        ),
        migrations.AddConstraint(
            model_name="notificationchannel",
            constraint=models.UniqueConstraint(
                fields=("team", "name"), name="channel_name_per_team"
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.UniqueConstraint(
                fields=("team", "name"), name="project_name_per_team"
            ),
        ),
        migrations.AddConstraint(
            model_name="tag",
            constraint=models.UniqueConstraint(
                fields=("team", "name"), name="tag_name_per_team"
            ),
        ),
        migrations.AddConstraint(
            model_name="membership",
            constraint=models.UniqueConstraint(
                fields=("user", "team"), name="membership_one_per_user_and_team"
            ),
        ),
        migrations.CreateModel(
            name="AuditEntry",
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
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                ("actor_name", models.CharField(max_length=200)),
                (
                    "via",
                    models.CharField(help_text="admin, api or import", max_length=20),
                ),
                ("object_type", models.CharField(max_length=100)),
                ("object_id", models.CharField(max_length=64)),
                ("object_repr", models.CharField(max_length=200)),
                (
                    "action",
                    models.CharField(
                        choices=[
                            ("created", "Created"),
                            ("changed", "Changed"),
                            ("deleted", "Deleted"),
                        ],
                        max_length=7,
                    ),
                ),
                ("changes", models.JSONField(blank=True, default=list)),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "team",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="projects.team",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "audit entries",
                "ordering": ["-at", "-id"],
                "indexes": [
                    models.Index(fields=["team", "-at"], name="audit_team_time"),
                    models.Index(
                        fields=["object_type", "object_id"], name="audit_object"
                    ),
                ],
            },
        ),
    ]
