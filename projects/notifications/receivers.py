"""Default channels follow every new project, however it is created."""

from __future__ import annotations

from projects.models import NotificationChannel, Project


def attach_default_channels(sender, instance: Project, created: bool, **kwargs):
    if created and not kwargs.get("raw"):
        instance.channels.add(*NotificationChannel.objects.filter(is_default=True))
