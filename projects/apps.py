from django.apps import AppConfig
from django.apps import apps as global_apps
from django.core import checks
from django.db.models.signals import post_delete, post_migrate, post_save


class ProjectsConfig(AppConfig):
    name = "projects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from projects import schedules
        from projects.domains.receivers import follow_watched_domain
        from projects.incidents.certificates import resolve_when_https_left
        from projects.models import Membership, Project
        from projects.notifications.receivers import attach_default_channels
        from projects.system_checks import (
            TASKS_CHECKS,
            daily_after_hourly_check,
            retention_settings_check,
            tasks_settings_check,
        )

        post_save.connect(
            attach_default_channels,
            sender=Project,
            dispatch_uid="projects.attach_default_channels",
        )
        post_save.connect(
            resolve_when_https_left,
            sender=Project,
            dispatch_uid="projects.resolve_when_https_left",
        )
        post_save.connect(
            follow_watched_domain,
            sender=Project,
            dispatch_uid="projects.follow_watched_domain",
        )
        from projects.teams.invitations import revoke_invitations_of_member

        for name, signal in (("saved", post_save), ("deleted", post_delete)):
            signal.connect(
                revoke_invitations_of_member,
                sender=Membership,
                dispatch_uid=f"projects.revoke_invitations_of_member.{name}",
            )
        checks.register(tasks_settings_check, TASKS_CHECKS)
        checks.register(retention_settings_check, TASKS_CHECKS)
        checks.register(daily_after_hourly_check, TASKS_CHECKS)
        # Sent once for this app, after every app's migrations have run.
        post_migrate.connect(
            schedules.register_after_migrate,
            sender=self,
            dispatch_uid="projects.schedules.register_after_migrate",
        )
        # The default region is row 1 (docs/regions.md): made by the
        # migration, and again after a flush (the tests' TransactionTestCase).
        post_migrate.connect(
            ensure_default_region,
            sender=self,
            dispatch_uid="projects.ensure_default_region",
        )
        # The default team is the install's first (teams.default_team_id):
        # made again after a flush, so a team made by hand afterwards, an
        # untrusted one say, never becomes the default by being first.
        post_migrate.connect(
            ensure_default_team,
            sender=self,
            dispatch_uid="projects.ensure_default_team",
        )


def ensure_default_team(using: str = "default", apps=None, **kwargs) -> None:
    """With the migrated state's Team (`apps`, as post_migrate sends it), so
    a migrate back to before teams existed finds no table and leaves it."""
    from projects.models.teams import DEFAULT_TEAM_FIELDS

    try:
        team = (apps or global_apps).get_model("projects", "Team")
    except LookupError:
        return
    if not team.objects.using(using).exists():
        team.objects.using(using).create(**DEFAULT_TEAM_FIELDS)


def ensure_default_region(using: str = "default", **kwargs) -> None:
    from django.db import connections

    from projects.models.regions import (
        DEFAULT_REGION_ID,
        DEFAULT_REGION_NAME,
        Region,
    )

    if Region.objects.using(using).filter(pk=DEFAULT_REGION_ID).exists():
        return
    Region.objects.using(using).create(pk=DEFAULT_REGION_ID, name=DEFAULT_REGION_NAME)
    connection = connections[using]
    if connection.vendor == "postgresql":
        # A row made with its id leaves the sequence behind.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('projects_region', 'id'), "
                "(SELECT max(id) FROM projects_region))"
            )
