"""Two teams, each with a project, a channel, a tag, a maintenance window
and an open incident, for the teams tests. Everything of team B carries
"bravo" in its name or URL, so a page that leaks any of it is one
`"bravo" in html` away from failing."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from projects.models import (
    Incident,
    MaintenanceWindow,
    Membership,
    NotificationChannel,
    Project,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
    Tag,
    Team,
)
from projects.notifications.signing import new_secret


@dataclass
class TeamObjects:
    team: Team
    project: Project
    channel: NotificationChannel
    tag: Tag
    window: MaintenanceWindow
    incident: Incident
    page: StatusPage


def make_team(word: str, *, trusted: bool = True) -> TeamObjects:
    """Trusted by default: its objects point at 127.0.0.1, which
    POLL_BLOCKED_NETWORKS keeps from untrusted teams."""
    team = Team.objects.create(name=word.title(), slug=word, trusted=trusted)
    channel = NotificationChannel.objects.create(
        team=team,
        name=f"{word}-hook",
        kind=NotificationChannel.Kind.WEBHOOK,
        url=f"http://127.0.0.1:9/{word}-hook-token",
        secret=new_secret(),
        is_default=True,
    )
    tag = Tag.objects.create(team=team, name=f"{word}-tag")
    project = Project.objects.create(
        team=team, name=f"{word}-site", url=f"http://127.0.0.1:9/{word}-path"
    )
    project.tags.add(tag)
    window = MaintenanceWindow.objects.create(
        team=team,
        name=f"{word}-window",
        starts_at=timezone.now(),
        ends_at=timezone.now(),
    )
    window.projects.add(project)
    incident = Incident.objects.create(
        project=project,
        started_at=timezone.now(),
        confirmed_at=timezone.now(),
        first_error=f"{word}-error",
    )
    page = StatusPage.objects.create(
        team=team,
        title=f"{word}-page",
        slug=f"{word}-page",
        visibility=StatusPage.Visibility.PRIVATE,
    )
    section = StatusPageSection.objects.create(page=page, name=f"{word}-section")
    section.projects.add(project)
    StatusUpdate.objects.create(
        incident=incident, status="investigating", message=f"{word}-update"
    )
    Subscriber.objects.create(
        page=page, email=f"{word}-subscriber@example.test", confirmed_at=None
    )
    return TeamObjects(team, project, channel, tag, window, incident, page)


def member(team: Team | None, role: str | None, name: str) -> User:
    """A staff user (so the admin lets them in) with `role` in `team`;
    no membership when `role` is None."""
    user = User.objects.create_user(name, email=f"{name}@example.test", password="x")
    user.is_staff = True
    user.save()
    if role is not None:
        Membership.objects.create(user=user, team=team, role=role)
    return user


def client_of(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
