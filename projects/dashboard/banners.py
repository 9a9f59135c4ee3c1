"""Banners about the monitor itself, for the top of the dashboard pages:
the poller is silent, or most targets fail at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from projects.models import MonitorOutage, PollerNode


@dataclass(frozen=True, slots=True)
class Banner:
    kind: str  # a CSS class suffix
    text: str
    since: datetime | None = None


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
