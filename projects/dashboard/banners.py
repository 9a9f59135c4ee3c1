"""Banners about the monitor itself, for the top of the dashboard pages:
the poller is silent, or most targets fail at once; and, on a fresh
install, what is still missing before anyone hears of an outage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Q
from django.urls import reverse
from django.utils import timezone

from projects.models import (
    MonitorOutage,
    NotificationChannel,
    PollerNode,
    Project,
    Team,
)
from projects.notifications.coverage import notify_nobody
from projects.teams.scoping import for_team


@dataclass(frozen=True, slots=True)
class Banner:
    kind: str  # a CSS class suffix
    text: str
    since: datetime | None = None
    link: str = ""  # where to fix it
    link_text: str = ""


def monitor_banners(now: datetime | None = None) -> list[Banner]:
    """Two small queries, whatever the number of projects."""
    now = now or timezone.now()
    banners = []
    poller = poller_banner(now)
    if poller is not None:
        banners.append(poller)
    outage = MonitorOutage.objects.filter(
        kind=MonitorOutage.Kind.UNREACHABLE, ended_at=None
    ).first()
    if outage is not None:
        failing, enabled = outage.detail.get("failing"), outage.detail.get("enabled")
        banners.append(
            Banner(
                "unreachable",
                f"Most targets failed at once ({failing} of {enabled}): the "
                "monitor's own network is the likely cause. Down notifications "
                "are held until it clears.",
                outage.started_at,
            )
        )
    return banners


def poller_banner(now: datetime) -> Banner | None:
    """None while some poller has been seen within POLLER_SILENT_SECONDS."""
    last_seen = PollerNode.objects.aggregate(last=Max("last_seen_at"))["last"]
    if last_seen is None:
        return Banner(
            "silent",
            "No poller has reported yet: nothing is being checked. Start one "
            "with: python manage.py runpoller.",
        )
    if now - last_seen > timedelta(seconds=settings.POLLER_SILENT_SECONDS):
        return Banner(
            "silent",
            "The poller is silent: nothing has been checked since it was last seen.",
            last_seen,
        )
    return None


def setup_hints(*, team: Team | None, has_projects: bool | None = None) -> list[Banner]:
    """While nobody would be told of an outage: after the first project,
    the next step (add a channel); then, while no enabled channel is the
    default, a warning that new projects notify nobody; and while enabled
    projects have no channel, how many. One query, and one more unless the
    caller knows there are no projects."""
    if team is None:
        return []  # nothing to set up in no team
    channels = for_team(NotificationChannel.objects.all(), team).aggregate(
        all=Count("pk"), default=Count("pk", filter=Q(is_default=True, enabled=True))
    )
    if not channels["all"]:
        if has_projects is None:
            has_projects = for_team(Project.objects.all(), team).exists()
        if not has_projects:
            return []  # the empty dashboard points to adding a project first
        return [
            Banner(
                "setup",
                "Next step: add a notification channel (a webhook, e-mail "
                "addresses or an Apprise URL). Until one exists, incidents "
                "notify nobody.",
                link=reverse("admin:projects_notificationchannel_add"),
                link_text="Add a notification channel",
            )
        ]
    hints = []
    if not channels["default"]:
        hints.append(
            Banner(
                "warning",
                "No default notification channel: new projects will notify "
                "nobody, and neither will news about the monitor itself.",
                link=reverse("admin:projects_notificationchannel_changelist"),
                link_text="Mark a channel as default, or add one",
            )
        )
    if has_projects is not False:
        silent = silent_projects_hint(team)
        if silent is not None:
            hints.append(silent)
    return hints


def silent_projects_hint(team: Team) -> Banner | None:
    """While some enabled project has no enabled channel: how many, with a
    link to the list of them, where "attach channels" covers them."""
    count = notify_nobody(team).count()
    if not count:
        return None
    return Banner(
        "warning",
        f"{count} project{'s notify' if count != 1 else ' notifies'} nobody: "
        f"{'their' if count != 1 else 'its'} incidents reach no channel.",
        link=reverse("admin:projects_project_changelist") + "?notifies=nobody",
        link_text="Attach channels to them",
    )
