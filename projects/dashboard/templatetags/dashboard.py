"""Small formatting helpers and the recent-poll strip for the dashboard."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, tzinfo

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from projects.checks import combinations
from projects.dashboard.queries.outages import Outage
from projects.dashboard.queries.overview import State
from projects.dashboard.queries.recent_polls import RECENT_POLLS, RecentPoll
from projects.dashboard.queries.uptime import Uptime
from projects.models import Incident, Project, Status, Tag
from projects.models.tags import DEFAULT_TAG_COLOR

register = template.Library()

STATUS_LABELS = dict(Status.choices)

COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}\Z")
# WCAG relative luminance above which black text contrasts more than white.
BLACK_TEXT_FROM_LUMINANCE = 0.179

# Uptime at or above these reads as good or fair; below, as poor.
GOOD_UPTIME = 99.9
FAIR_UPTIME = 99.0


@register.filter
def up_rules(project: Project) -> list[str]:
    return combinations.up_rules(project)


@register.filter
def state_label(state: str) -> str:
    return State(state).label


@register.filter
def percent(uptime: Uptime) -> str:
    """99.99%, rounded down so that anything short of 100% never shows as
    100%; an en dash when there were no polls."""
    value = uptime.percent
    if value is None:
        return "\N{EN DASH}"
    if value == 100:
        return "100%"
    return f"{math.floor(value * 100) / 100:.2f}%"


@register.filter
def maintenance_share(uptime: Uptime) -> str:
    """The share of polls made during maintenance, like percent(); empty
    when there were none."""
    value = uptime.maintenance_percent
    if value is None:
        return ""
    return "100%" if value == 100 else f"{math.ceil(value * 100) / 100:.2f}%"


@register.filter
def uptime_class(uptime: Uptime) -> str:
    value = uptime.percent
    if value is None:
        return "uptime-none"
    if value >= GOOD_UPTIME:
        return "uptime-good"
    return "uptime-fair" if value >= FAIR_UPTIME else "uptime-poor"


@register.filter
def duration(delta: timedelta) -> str:
    """A duration in its two largest units: "45 s", "3 h 5 min", "2 d 4 h"."""
    seconds = max(int(delta.total_seconds()), 0)
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (seconds, "s")]
    shown = [f"{n} {unit}" for n, unit in parts if n][:2]
    return " ".join(shown) or "0 s"


@register.filter
def outage_duration(outage: Outage, now: datetime) -> str:
    return duration(outage.duration(now))


@register.filter
def incident_duration(incident: Incident, now: datetime) -> str:
    return duration((incident.resolved_at or now) - incident.started_at)


@register.simple_tag(takes_context=True)
def query(context: template.Context, **changes: object) -> str:
    """This page's query string with `changes` applied; a change to "" or
    None removes the parameter."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        if value in ("", None):
            params.pop(key, None)
        else:
            params[key] = value
    return f"?{params.urlencode()}"


@register.simple_tag
def recent_polls_strip(
    polls: list[RecentPoll], slots: int = RECENT_POLLS
) -> SafeString:
    """One bar per poll, newest on the right, each with a tooltip. Up bars
    are short and down bars tall (see monitor.css), so they differ in shape
    as well as colour.

    Built in Python rather than in a template: a page of 50 projects has
    2,500 bars, and a template loop would be the slowest part of the page.
    """
    zone = timezone.get_current_timezone()
    empty = '<span class="hb hb-none"></span>' * (slots - len(polls))
    bars = "".join(
        f'<span class="hb hb-{beat.status}" '
        f'title="{escape(_tooltip(beat, zone))}"></span>'
        for beat in polls
    )
    down = sum(beat.status == Status.DOWN for beat in polls)
    if polls:
        label = f"Last {len(polls)} polls: {len(polls) - down} up, {down} down"
    else:
        label = "No polls yet"
    return mark_safe(
        f'<span class="strip" role="img" aria-label="{label}">{empty}{bars}</span>'
    )


def _tooltip(beat: RecentPoll, zone: tzinfo) -> str:
    parts = [
        f"{beat.polled_at.astimezone(zone):%b %d %H:%M:%S}",
        STATUS_LABELS[beat.status],
        str(beat.status_code) if beat.status_code else "no response",
    ]
    if beat.response_time_ms is not None:
        parts.append(f"{beat.response_time_ms} ms")
    if beat.error:
        parts.append(beat.error)
    return " · ".join(parts)


@register.simple_tag
def tag_chip(tag: Tag) -> SafeString:
    """The tag as a chip in its colour, linking to the overview filtered by
    it. The colour is checked again here: it goes into a style attribute."""
    color = tag.color if COLOR_RE.match(tag.color) else DEFAULT_TAG_COLOR
    url = f"{reverse('dashboard:overview')}?{urlencode({'tag': tag.name})}"
    return format_html(
        '<a class="tag-chip" href="{}" style="background:{};color:{}">{}</a>',
        url,
        color,
        chip_text_color(color),
        tag.name,
    )


def chip_text_color(background: str) -> str:
    """Black or white, whichever contrasts more with `background` (#rrggbb)."""
    return "#000" if _luminance(background) > BLACK_TEXT_FROM_LUMINANCE else "#fff"


def _luminance(color: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour, 0 (black) to 1."""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
