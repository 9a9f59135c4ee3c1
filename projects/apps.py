from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate, post_save


class ProjectsConfig(AppConfig):
    name = "projects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # django-q2's schedules and task re-runs, for superusers only.
        from projects import schedules, task_admin  # noqa: F401
        from projects.checks import (
            daily_after_hourly_check,
            retention_settings_check,
            tasks_settings_check,
        )
        from projects.models import Project
        from projects.notifications.receivers import attach_default_channels

        post_save.connect(
            attach_default_channels,
            sender=Project,
            dispatch_uid="projects.attach_default_channels",
        )
        checks.register(tasks_settings_check)
        checks.register(retention_settings_check)
        checks.register(daily_after_hourly_check)
        # Sent once for this app, after every app's migrations have run.
        post_migrate.connect(
            schedules.register_after_migrate,
            sender=self,
            dispatch_uid="projects.schedules.register_after_migrate",
        )
