"""Which projects a channel covers.

A channel marked default is attached to the projects made after it; the
projects that already exist are covered only when someone says so (the
admin's "also attach" box, the API's `attach_to_existing`), or with the
project list's bulk "attach channels". The dashboard counts the enabled
projects that notify nobody, so a gap never goes unseen.

Links are written as rows of the many-to-many table in one statement
each way, so covering 10 projects or 10,000 costs the same two queries.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Exists, OuterRef, QuerySet

from projects.models import NotificationChannel, Project, Team
from projects.teams.scoping import for_team

Link = Project.channels.through


def uncovered(channel: NotificationChannel) -> QuerySet[Project]:
    """The projects of the channel's team it is not attached to."""
    projects = Project.objects.filter(team_id=channel.team_id)
    if channel.pk is None:
        return projects
    return projects.exclude(channels=channel)


def attach(channels: Iterable[NotificationChannel], projects: QuerySet) -> int:
    """Attach every channel to every project of its own team; the number of
    new links (those already there are left as they are)."""
    new = []
    for channel in channels:
        missing = projects.filter(team_id=channel.team_id).exclude(channels=channel)
        new += [
            Link(project_id=pk, notificationchannel_id=channel.pk)
            for pk in missing.values_list("pk", flat=True)
        ]
    Link.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def detach(channels: Iterable[NotificationChannel], projects: QuerySet) -> int:
    """Remove the channels from the projects; the number of links removed."""
    removed, _ = Link.objects.filter(
        notificationchannel__in=[channel.pk for channel in channels],
        project__in=projects.values("pk"),
    ).delete()
    return removed


def notify_nobody(team: Team | None) -> QuerySet[Project]:
    """The team's enabled projects with no enabled channel attached."""
    told = Link.objects.filter(
        project=OuterRef("pk"), notificationchannel__enabled=True
    )
    return for_team(Project.objects.filter(enabled=True), team).filter(~Exists(told))
