"""What each badge says: (label, message, colour) for a project or a
page, from the project's stored state and the dashboard's uptime query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from projects.dashboard.queries.ranges import RANGES
from projects.dashboard.queries.uptime import uptime_by_project
from projects.status_pages.days import percent_text

UPTIME_RANGES = ("24h", "7d", "30d", "90d")
PROJECT_FIELDS = (
    "id",
    "name",
    "enabled",
    "state",
    "tls_expires_at",
    "domain_expires_at",
    "degraded_since",
)


@dataclass(frozen=True, slots=True)
class Badge:
    label: str
    message: str
    color: str


UNKNOWN = Badge("status", "unknown", "lightgrey")

PAGE_BADGES = {
    "operational": Badge("status", "operational", "brightgreen"),
    "partial": Badge("status", "partial outage", "orange"),
    "major": Badge("status", "major outage", "red"),
    "slow": Badge("status", "degraded performance", "yellow"),
    "maintenance": Badge("status", "maintenance", "blue"),
}


def status_badge(project: dict) -> Badge:
    if not project["enabled"]:
        return Badge("status", "paused", "lightgrey")
    if project["state"] == "up" and project.get("degraded_since"):
        return Badge("status", "degraded", "yellow")
    message, color = {
        "up": ("up", "brightgreen"),
        "pending": ("up", "brightgreen"),  # failing, not confirmed yet
        "down": ("down", "red"),
    }.get(project["state"], ("no data", "lightgrey"))
    return Badge("status", message, color)


def uptime_badge(project: dict, key: str, now: datetime) -> Badge:
    label = f"uptime {key}"
    time_range = RANGES[key]
    uptime = uptime_by_project([project["id"]], [time_range], now)[project["id"]]
    percent = uptime[key].percent
    if percent is None:
        return Badge(label, "no data", "lightgrey")
    return Badge(label, percent_text(percent), uptime_color(percent))


def uptime_color(percent: float) -> str:
    for floor, color in (
        (99.9, "brightgreen"),
        (99, "green"),
        (97, "yellowgreen"),
        (95, "yellow"),
        (90, "orange"),
    ):
        if percent >= floor:
            return color
    return "red"


def response_time_badge(average_ms: int | None) -> Badge:
    label = "response time"
    if average_ms is None:
        return Badge(label, "no data", "lightgrey")
    color = "brightgreen" if average_ms < 300 else "yellow"
    if average_ms >= 1000:
        color = "orange" if average_ms < 3000 else "red"
    return Badge(label, f"{average_ms} ms", color)


def certificate_badge(project: dict, now: datetime) -> Badge:
    return _expiry_badge("certificate", project["tls_expires_at"], now)


def domain_badge(project: dict, now: datetime) -> Badge:
    """Days until the registration of its domain expires (the warning on)."""
    return _expiry_badge("domain", project["domain_expires_at"], now)


def _expiry_badge(label: str, expires: datetime | None, now: datetime) -> Badge:
    if expires is None:
        return Badge(label, "no data", "lightgrey")
    days = (expires - now).days
    if expires <= now:
        return Badge(label, "expired", "red")
    color = "brightgreen" if days > 30 else "yellow" if days > 14 else "orange"
    return Badge(label, f"{days} days left" if days != 1 else "1 day left", color)
