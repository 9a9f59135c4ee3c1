"""Default channels follow every new project, however it is created: the
defaults of the project's own team, never another team's. A project saved
by ProjectForm (channels_chosen) has the channels chosen on the form, whose
initial value is these same defaults."""

from __future__ import annotations

from projects.models import NotificationChannel, Project


def attach_default_channels(sender, instance: Project, created: bool, **kwargs):
    if created and not kwargs.get("raw") and not instance.channels_chosen:
        defaults = NotificationChannel.objects.filter(
            is_default=True, team_id=instance.team_id
        )
        instance.channels.add(*defaults)
