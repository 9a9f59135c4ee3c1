"""Dates and times the same way everywhere: "2026-11-29 14:05:07 UTC", in
the site's zone (TIME_ZONE) and named; DATETIME_FORMAT in
monitor/formats/en/formats.py, which the admin uses too. Templates use it
as the `when` filter (projects/templatetags/when.py); a day alone is
written Y-m-d, a time ago stays in words (`naturaltime`)."""

from __future__ import annotations

from datetime import datetime

from django.utils import formats, timezone


def when(value: datetime | None) -> str:
    """The date and time in the site's zone, with the zone's name; "" for
    no value."""
    if not value:
        return ""
    if timezone.is_aware(value):
        value = timezone.localtime(value)
    return formats.date_format(value, "DATETIME_FORMAT")
