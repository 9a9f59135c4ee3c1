from django.apps import AppConfig
from django.db.models.signals import post_save


class ProjectsConfig(AppConfig):
    name = "projects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from projects.models import Project
        from projects.notifications.receivers import attach_default_channels

        post_save.connect(
            attach_default_channels,
            sender=Project,
            dispatch_uid="projects.attach_default_channels",
        )
