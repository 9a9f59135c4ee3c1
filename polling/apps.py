from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save, pre_save


class PollingConfig(AppConfig):
    name = "polling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from polling import receivers, system_checks  # noqa: F401 - checks register
        from projects.models import Project, Team
        from projects.signals import projects_bulk_changed

        post_save.connect(
            receivers.project_saved,
            sender=Project,
            dispatch_uid="polling.project_saved",
        )
        post_delete.connect(
            receivers.project_deleted,
            sender=Project,
            dispatch_uid="polling.project_deleted",
        )
        projects_bulk_changed.connect(
            receivers.projects_bulk_changed,
            sender=Project,
            dispatch_uid="polling.projects_bulk_changed",
        )
        # A team's trust decides how its projects may be polled.
        pre_save.connect(
            receivers.team_checked, sender=Team, dispatch_uid="polling.team_checked"
        )
        post_save.connect(
            receivers.team_saved, sender=Team, dispatch_uid="polling.team_saved"
        )
